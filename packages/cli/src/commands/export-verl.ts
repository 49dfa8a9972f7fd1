import { Option, type Command } from 'commander';
import { describeRedactionSummary, exportVerl, type VerlFormat } from '@agl/trainer/export';
import { exportAction, exportSubcommand, type ExportFilterFlags } from './export-filter-flags';
import { numberFlag, parseChoices } from './flag-values';
import { processIo, type CliIo } from './output';

interface ExportVerlFlags extends ExportFilterFlags {
  name: string;
  format: string;
  level: 'trajectory' | 'transition';
  estimator: 'grpo' | 'rloo' | 'none';
  std: boolean;
  rolloutLevel?: boolean;
  perRolloutLoss?: boolean;
  rewardMode: 'final' | 'intermediate';
  discount?: number;
  fillReward?: number;
  maxPromptLength?: number;
  maxResponseLength?: number;
}

/** `agl export verl --out dir`: verl rollout-batch rows (JSONL + Parquet) from a store. */
export function exportVerlCommand(io: CliIo = processIo): Command {
  return exportSubcommand(
    'verl',
    'write verl training rows (prompt/response token ids, response mask, advantages, data_id) as JSONL and Parquet',
    {
      defaultStatus: 'succeeded,failed',
      outFlag: '--out <dir>',
      outHelp: 'output folder (gets <name>.jsonl, <name>.parquet, <name>.info.json)',
    },
  )
    .option('--name <name>', 'base file name', 'verl')
    .option('--format <formats>', 'jsonl, parquet or both (comma-separated)', 'jsonl,parquet')
    .addOption(
      new Option('--level <level>', 'one row per LLM call, or calls merged per trajectory')
        .choices(['trajectory', 'transition'])
        .default('trajectory'),
    )
    .addOption(
      new Option('--estimator <name>', 'advantage estimator').choices(['grpo', 'rloo', 'none']).default('grpo'),
    )
    .option('--no-std', 'GRPO: do not divide by the group standard deviation')
    .option('--no-rollout-level', 'score every row on its own instead of one representative per rollout')
    .option('--per-rollout-loss', 'divide advantages by (rollout trained tokens × trained rows), as per_rollout_mean')
    .addOption(
      new Option('--reward-mode <mode>', 'final reward to every call, or the intermediate rewards where emitted')
        .choices(['final', 'intermediate'])
        .default('final'),
    )
    .option('--discount <gamma>', 'discount γ in [0, 1] (default 1)', numberFlag('discount', { min: 0, max: 1 }))
    .option('--fill-reward <value>', 'reward of a rollout that has none (default 0)', numberFlag('fill-reward'))
    .option(
      '--max-prompt-length <n>',
      'drop rows with longer prompts',
      numberFlag('max-prompt-length', { integer: true, min: 1 }),
    )
    .option(
      '--max-response-length <n>',
      'truncate longer responses',
      numberFlag('max-response-length', { integer: true, min: 1 }),
    )
    .action(
      exportAction<ExportVerlFlags>(async (store, filter, flags) => {
        const result = await exportVerl({
          store,
          outDir: flags.out,
          name: flags.name,
          formats: parseChoices<VerlFormat>(flags.format, ['jsonl', 'parquet'], 'format') ?? [],
          filter,
          level: flags.level,
          reward: {
            mode: flags.rewardMode,
            ...(flags.discount !== undefined ? { discount: flags.discount } : {}),
            ...(flags.fillReward !== undefined ? { fillValue: flags.fillReward } : {}),
          },
          advantage: {
            estimator: flags.estimator,
            normalizeByStd: flags.std,
            ...(flags.rolloutLevel === false ? { rolloutLevel: false } : {}),
            perRolloutLossNormalisation: flags.perRolloutLoss === true,
          },
          ...(flags.maxPromptLength !== undefined ? { maxPromptLength: flags.maxPromptLength } : {}),
          ...(flags.maxResponseLength !== undefined ? { maxResponseLength: flags.maxResponseLength } : {}),
          redact: flags.redact,
        });
        if (flags.json) {
          io.out(
            JSON.stringify(
              {
                files: result.files,
                info: result.infoPath,
                rollouts: result.nRollouts,
                stats: result.stats,
                redaction: result.redaction,
              },
              null,
              2,
            ),
          );
          return;
        }
        const paths = [result.files.jsonl, result.files.parquet].filter(Boolean).join(', ');
        const s = result.stats;
        io.out(`wrote ${result.files.rows} rows to ${paths}`);
        io.out(
          `${result.nRollouts} rollouts, ${s.nTrajectoriesWithSamples} with token ids, ${s.nTurns} calls, ` +
            `${s.nMismatches} prefix mismatches, ${s.nSkippedNoTokens} calls without token ids`,
        );
        io.out(describeRedactionSummary(result.redaction));
      }),
    );
}
