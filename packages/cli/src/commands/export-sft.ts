import { Command } from 'commander';
import { exportSft } from '@agl/trainer/export';
import { numberFlag, parseExportFilter, withExportFilterFlags, type ExportFilterFlags } from './export-filter-flags';
import { processIo, type CliIo } from './output';
import { openCliStore } from './store-options';

interface ExportSftFlags extends ExportFilterFlags {
  out: string;
  minReward?: number;
  bestPerTask?: boolean;
}

/** `agl export sft --out file.jsonl`: OpenAI chat fine-tuning JSONL from a store. */
export function exportSftCommand(io: CliIo = processIo): Command {
  const cmd = new Command('sft').description(
    'write OpenAI chat fine-tuning JSONL ({messages, tools}) from stored rollouts',
  );
  withExportFilterFlags(cmd, 'succeeded')
    .requiredOption('--out <file>', 'output .jsonl file')
    .option('--min-reward <value>', 'keep only rollouts whose final reward is at least this', numberFlag('min-reward'))
    .option('--best-per-task', 'keep only the best-rewarded rollout of each task')
    .action(async (flags: ExportSftFlags) => {
      const filter = parseExportFilter(flags);
      const { store, close } = await openCliStore(flags);
      try {
        const result = await exportSft({
          store,
          out: flags.out,
          filter: { statusIn: ['succeeded'], ...filter },
          ...(flags.minReward !== undefined ? { minReward: flags.minReward } : {}),
          bestPerTask: flags.bestPerTask === true,
        });
        if (flags.json) {
          io.out(JSON.stringify({ out: result.out, rollouts: result.nRollouts, stats: result.stats }, null, 2));
          return;
        }
        io.out(`wrote ${result.stats.nRecords} conversations to ${result.out}`);
        io.out(`${result.nRollouts} rollouts, ${result.stats.nFilteredOut} left out by --min-reward / --best-per-task`);
      } finally {
        await close();
      }
    });
  return cmd;
}
