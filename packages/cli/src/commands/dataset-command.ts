import { Command, Option } from 'commander';
import { buildDataset, parseTimeBound, writeDatasetFiles, type BuildDatasetOptions } from '@agl/trainer';
import { describeRedactionSummary } from '@agl/trainer/export';
import { parseStatuses } from './export-filter-flags';
import { list, numberFlag } from './flag-values';
import { processIo, type CliIo } from './output';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';

/** The flags: those that pass through as they are keep the names of {@link BuildDatasetOptions}. */
interface DatasetFlags
  extends
    StoreFlags,
    Pick<BuildDatasetOptions, 'minReward' | 'maxReward' | 'feedback' | 'dedupe' | 'limit' | 'valFraction'> {
  out: string;
  source?: string;
  since?: string;
  until?: string;
  agent?: string;
  status?: string;
  json?: boolean;
  redact: boolean;
  release?: string;
  arm?: 'baseline' | 'candidate';
}

/** The flags as {@link BuildDatasetOptions}; relative times count back from `nowSeconds`. */
function datasetOptions(flags: DatasetFlags, nowSeconds: number): BuildDatasetOptions {
  return {
    sources: list(flags.source),
    since: flags.since === undefined ? undefined : parseTimeBound(flags.since, nowSeconds, 'since'),
    until: flags.until === undefined ? undefined : parseTimeBound(flags.until, nowSeconds, 'until'),
    agents: list(flags.agent),
    minReward: flags.minReward,
    maxReward: flags.maxReward,
    feedback: flags.feedback,
    dedupe: flags.dedupe,
    limit: flags.limit,
    valFraction: flags.valFraction,
    statuses: parseStatuses(flags.status),
    redact: flags.redact,
    ...(flags.release !== undefined ? { release: flags.release } : {}),
    ...(flags.arm !== undefined ? { arm: flags.arm } : {}),
  };
}

/** `agl dataset build`: stored rollouts -> a JSONL task set (CONTRACTS.md item E), optionally with a val split. */
export function datasetCommand(io: CliIo = processIo): Command {
  const cmd = new Command('dataset').description('build task sets from what a store recorded');
  storeCommand(
    'build',
    'write one task per line: the rollout input plus `_agl` (rollout id, reward, feedback, source)',
    (c) =>
      c
        .requiredOption('--out <file>', 'output .jsonl file (the val split goes to <name>.val.jsonl next to it)')
        .option(
          '--source <sources>',
          'metadata.source values to keep, comma-separated (production, unscoped, ...; rollouts without one count as their mode: train, val, test; `any` = all)',
        )
        .option('--since <time>', 'rollouts started at or after: an ISO date or a time ago (30m, 12h, 7d, 2w)')
        .option('--until <time>', 'rollouts started before: an ISO date or a time ago')
        .option('--agent <names>', 'agent names to keep (metadata.agent_name, else the agent span), comma-separated')
        .option(
          '--min-reward <r>',
          'final reward at least r (rollouts without a reward are dropped)',
          numberFlag('min-reward'),
        )
        .option(
          '--max-reward <r>',
          'final reward at most r (rollouts without a reward are dropped)',
          numberFlag('max-reward'),
        )
        .addOption(
          new Option('--feedback <which>', 'only rollouts with or without user feedback').choices(['with', 'without']),
        )
        .option('--dedupe', 'keep each input once (the earliest rollout)')
        .option('--limit <n>', 'at most n tasks (the newest)', numberFlag('limit', { integer: true, min: 1 }))
        .option(
          '--val-fraction <f>',
          'put this share of tasks in <name>.val.jsonl, chosen by a hash of the input (stable across re-runs)',
          numberFlag('val-fraction', { min: 0, max: 0.99 }),
        )
        .option('--status <statuses>', 'rollout statuses to read, comma-separated (default succeeded,failed)')
        .option('--release <releaseId>', "keep a release's requests (agl release status lists releases)")
        .addOption(
          new Option('--arm <arm>', "with --release: keep one arm's requests").choices(['baseline', 'candidate']),
        )
        .option('--json', 'print the counts as JSON')
        .option('--no-redact', 'write secrets found in inputs as they are (default: mask them, see SECURITY.md)'),
    cmd,
  ).action(async (flags: DatasetFlags) => {
    const options = datasetOptions(flags, Date.now() / 1000);
    await withCliStore(flags, async (store) => {
      const built = await buildDataset(store, options);
      const paths = await writeDatasetFiles(flags.out, built, flags.valFraction !== undefined);
      if (flags.json) {
        io.out(
          JSON.stringify({
            scanned: built.scanned,
            train: built.train.length,
            val: built.val.length,
            out: paths.out,
            val_out: paths.valOut,
            redaction: built.redaction,
          }),
        );
      } else {
        io.out(`wrote ${built.train.length} tasks to ${paths.out} (from ${built.scanned} rollouts)`);
        if (paths.valOut) io.out(`wrote ${built.val.length} validation tasks to ${paths.valOut}`);
        io.out(describeRedactionSummary(built.redaction));
      }
    });
  });
  return cmd;
}
