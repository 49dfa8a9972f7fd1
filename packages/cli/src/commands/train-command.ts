import { Command, InvalidArgumentError, Option } from 'commander';
import { UserError } from '@agl/core/errors';
import { Trainer, type DatasetSource, type TrainerOptions } from '@agl/trainer';
import { createProgressDisplay, formatProgress } from '../progress/progress-display';
import { loadEntryModule } from './load-entry';
import { processIo, type CliIo } from './output';
import { reportTrainAlgorithm, resolveTrainAlgorithm, TRAIN_ALGORITHMS } from './train-algorithm';

/** What an entry module's `config` export may set (flags override it). */
export interface TrainEntryConfig extends Omit<TrainerOptions, 'algorithm' | 'store' | 'agentModule'> {
  storeUrl?: string;
  store?: string;
  token?: string;
}

interface TrainFlags {
  storeUrl?: string;
  store?: string;
  token?: string;
  runners?: number;
  workerMode?: 'async' | 'process';
  gateway?: boolean;
  progress: boolean;
  json?: boolean;
  algorithm?: string;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected an integer ≥ 1, got ${JSON.stringify(value)}`);
  return n;
}

/** `agl train <entry>`: load the entry module and run `Trainer.fit` with its agent, algorithm and datasets. */
export function trainCommand(io: CliIo = processIo): Command {
  return new Command('train')
    .description('train an agent: the entry module exports `agent` and optionally `algorithm`, `train`, `val`, `config`')
    .argument('<entry>', 'a .ts or .js module')
    .option('--store-url <url>', 'use a running `agl store serve` instead of the embedded store')
    .option('--store <path>', 'embedded SQLite store file (default .agl/store.sqlite)')
    .option('--token <token>', 'bearer token of the store server (default $AGL_STORE_TOKEN)')
    .option('--runners <n>', 'number of runner workers', positiveInt)
    .addOption(new Option('--worker-mode <mode>', 'run workers in this process or as child processes').choices(['async', 'process']))
    .option('--gateway', 'process agents: route their LLM calls through a loopback AGL gateway (spans with token ids)')
    .option('--no-progress', 'no live progress display')
    .option('--json', 'print the result as JSON')
    .addOption(new Option('--algorithm <name>', 'algorithm instead of the entry\'s `algorithm` export (apo reads the entry\'s `apo` options)').choices([...TRAIN_ALGORITHMS]))
    .action(async (entry: string, flags: TrainFlags) => {
      const { path, module } = await loadEntryModule(entry);
      if (module.agent === undefined) {
        throw new UserError(`${path} does not export \`agent\`; add \`export const agent = async (task, resources) => reward\` (or litAgent / processAgent).`);
      }
      const config = (module.config ?? {}) as TrainEntryConfig;
      const { storeUrl, store, token, ...trainerConfig } = config;
      const display = flags.progress ? createProgressDisplay({ title: 'agl train' }) : null;
      const options: TrainerOptions = {
        ...trainerConfig,
        algorithm: resolveTrainAlgorithm({ name: flags.algorithm, module, io }),
        store: flags.storeUrl ?? flags.store ?? storeUrl ?? process.env.AGL_STORE_URL ?? store,
        storeToken: flags.token || token || process.env.AGL_STORE_TOKEN || undefined,
        nRunners: flags.runners ?? config.nRunners,
        workerMode: flags.workerMode ?? config.workerMode,
        gateway: flags.gateway ?? config.gateway,
        agentModule: { path, exportName: 'agent' },
        onProgress: (snapshot) => {
          display?.update(snapshot);
          config.onProgress?.(snapshot);
        },
      };
      const abort = new AbortController();
      const onSignal = (): void => abort.abort(new Error('interrupted'));
      process.once('SIGINT', onSignal);
      try {
        const result = await new Trainer(options).fit(module.agent as never, {
          train: module.train as DatasetSource | undefined,
          val: module.val as DatasetSource | undefined,
          signal: abort.signal,
        });
        await display?.finish(result.progress);
        if (!flags.json) reportTrainAlgorithm(options.algorithm, io);
        if (flags.json) {
          io.out(JSON.stringify({ runner: result.runner, progress: result.progress, duration_seconds: result.durationSeconds }));
        } else {
          io.out(`done in ${result.durationSeconds.toFixed(1)}s: ${result.progress ? formatProgress(result.progress) : `${result.runner.succeeded} succeeded, ${result.runner.failed} failed`}`);
        }
      } catch (err) {
        await display?.finish(null);
        throw err;
      } finally {
        process.removeListener('SIGINT', onSignal);
      }
    });
}
