import type { Command } from 'commander';
import { describeRedactionSummary, exportSft } from '@agl/trainer/export';
import { exportAction, exportSubcommand, type ExportFilterFlags } from './export-filter-flags';
import { numberFlag } from './flag-values';
import { processIo, type CliIo } from './output';

interface ExportSftFlags extends ExportFilterFlags {
  minReward?: number;
  bestPerTask?: boolean;
}

/** `agl export sft --out file.jsonl`: OpenAI chat fine-tuning JSONL from a store. */
export function exportSftCommand(io: CliIo = processIo): Command {
  return exportSubcommand('sft', 'write OpenAI chat fine-tuning JSONL ({messages, tools}) from stored rollouts', {
    defaultStatus: 'succeeded',
    outFlag: '--out <file>',
    outHelp: 'output .jsonl file',
  })
    .option('--min-reward <value>', 'keep only rollouts whose final reward is at least this', numberFlag('min-reward'))
    .option('--best-per-task', 'keep only the best-rewarded rollout of each task')
    .action(
      exportAction<ExportSftFlags>(async (store, filter, flags) => {
        const result = await exportSft({
          store,
          out: flags.out,
          filter: { statusIn: ['succeeded'], ...filter },
          ...(flags.minReward !== undefined ? { minReward: flags.minReward } : {}),
          bestPerTask: flags.bestPerTask === true,
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
        io.out(`wrote ${result.stats.nRecords} conversations to ${result.out}`);
        io.out(`${result.nRollouts} rollouts, ${result.stats.nFilteredOut} left out by --min-reward / --best-per-task`);
        io.out(describeRedactionSummary(result.redaction));
      }),
    );
}
