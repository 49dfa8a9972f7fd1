import type { Command } from 'commander';
import { describeRedactionSummary, exportDpo } from '@agl/trainer/export';
import { exportAction, exportSubcommand, type ExportFilterFlags } from './export-filter-flags';
import { numberFlag } from './flag-values';
import { processIo, type CliIo } from './output';

interface ExportDpoFlags extends ExportFilterFlags {
  minRewardGap?: number;
}

/** `agl export dpo --out file.jsonl`: OpenAI preference (DPO) JSONL from a store. */
export function exportDpoCommand(io: CliIo = processIo): Command {
  return exportSubcommand(
    'dpo',
    'write OpenAI preference fine-tuning JSONL: per task, the best vs the worst rollout at their first differing answer',
    { defaultStatus: 'succeeded,failed', outFlag: '--out <file>', outHelp: 'output .jsonl file' },
  )
    .option(
      '--min-reward-gap <value>',
      'best minus worst reward must exceed this (default 0)',
      numberFlag('min-reward-gap', { min: 0 }),
    )
    .action(
      exportAction<ExportDpoFlags>(async (store, filter, flags) => {
        const result = await exportDpo({
          store,
          out: flags.out,
          filter,
          ...(flags.minRewardGap !== undefined ? { minRewardGap: flags.minRewardGap } : {}),
          redact: flags.redact,
        });
        if (flags.json) {
          io.out(
            JSON.stringify(
              { out: result.out, rollouts: result.nRollouts, stats: result.stats, redaction: result.redaction },
              null,
              2,
            ),
          );
          return;
        }
        const s = result.stats;
        io.out(`wrote ${s.nPairs} preference pairs to ${result.out}`);
        io.out(
          `${s.nTasks} tasks: ${s.nTooFewRewarded} with fewer than two rewarded rollouts, ${s.nNoRewardGap} without a reward gap, ` +
            `${s.nNoSharedPrompt} without a shared prompt, ${s.nIdentical} with identical answers`,
        );
        io.out(describeRedactionSummary(result.redaction));
      }),
    );
}
