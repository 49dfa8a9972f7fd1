import { Command } from 'commander';
import { exportDpo } from '@agl/trainer/export';
import { numberFlag, parseExportFilter, withExportFilterFlags, type ExportFilterFlags } from './export-filter-flags';
import { processIo, type CliIo } from './output';
import { openCliStore } from './store-options';

interface ExportDpoFlags extends ExportFilterFlags {
  out: string;
  minRewardGap?: number;
}

/** `agl export dpo --out file.jsonl`: OpenAI preference (DPO) JSONL from a store. */
export function exportDpoCommand(io: CliIo = processIo): Command {
  const cmd = new Command('dpo').description(
    'write OpenAI preference fine-tuning JSONL: per task, the best vs the worst rollout at their first differing answer',
  );
  withExportFilterFlags(cmd, 'succeeded,failed')
    .requiredOption('--out <file>', 'output .jsonl file')
    .option(
      '--min-reward-gap <value>',
      'best minus worst reward must exceed this (default 0)',
      numberFlag('min-reward-gap', { min: 0 }),
    )
    .action(async (flags: ExportDpoFlags) => {
      const filter = parseExportFilter(flags);
      const { store, close } = await openCliStore(flags);
      try {
        const result = await exportDpo({
          store,
          out: flags.out,
          filter,
          ...(flags.minRewardGap !== undefined ? { minRewardGap: flags.minRewardGap } : {}),
        });
        if (flags.json) {
          io.out(JSON.stringify({ out: result.out, rollouts: result.nRollouts, stats: result.stats }, null, 2));
          return;
        }
        const s = result.stats;
        io.out(`wrote ${s.nPairs} preference pairs to ${result.out}`);
        io.out(
          `${s.nTasks} tasks: ${s.nTooFewRewarded} with fewer than two rewarded rollouts, ${s.nNoRewardGap} without a reward gap, ` +
            `${s.nNoSharedPrompt} without a shared prompt, ${s.nIdentical} with identical answers`,
        );
      } finally {
        await close();
      }
    });
  return cmd;
}
