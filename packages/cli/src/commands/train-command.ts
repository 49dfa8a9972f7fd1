import { Command, InvalidArgumentError, Option } from 'commander';
import { UserError } from '@agl/core/errors';
import { formatRunSummary, Trainer, type DatasetSource, type TrainerOptions } from '@agl/trainer';
import { createProgressDisplay } from '../progress/progress-display';
import { loadEntryModule } from './load-entry';
import { processIo, type CliIo } from './output';
import { releaseToWire } from '@agl/core/schema';
import { requireReleaseFlag, withReleaseFlags, type ReleaseFlags } from './release-flags';
import { reportTrainAlgorithm, resolveTrainAlgorithm, TRAIN_ALGORITHMS } from './train-algorithm';
import { latestBeforeTraining, releaseTrainedWinner } from './train-release';
import {
  announceTinkerResume,
  resolveTinkerAlgorithm,
  tinkerRunReport,
  withTinkerTrainFlags,
  type TinkerTrainFlags,
} from './train-tinker';

/** What an entry module's `config` export may set (flags override it). */
export interface TrainEntryConfig extends Omit<TrainerOptions, 'algorithm' | 'store' | 'agentModule'> {
  storeUrl?: string;
  store?: string;
  token?: string;
}

interface TrainFlags extends ReleaseFlags, TinkerTrainFlags {
  /** `--release`: APO's winner becomes a release candidate instead of the latest. */
  release?: boolean;
  storeUrl?: string;
  store?: string;
  token?: string;
  runners?: number;
  workerMode?: 'async' | 'process';
  gateway?: boolean;
  progress: boolean;
  json?: boolean;
  quiet?: boolean;
  algorithm?: string;
  train?: string;
  val?: string;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected an integer ≥ 1, got ${JSON.stringify(value)}`);
  return n;
}

/** What `agl train --help` says about the entry module's exports (the CLI README has the same list). */
const ENTRY_HELP = `
The entry module (.ts through tsx, or .js) exports:
  agent      required: a function (task, resources, context) => reward, a litAgent(...) or a processAgent(...)
  train      the training tasks: an array, an (async) iterable, or a .json / .jsonl path (--train <file> overrides it)
  val        the validation tasks, same forms (--val <file> overrides it)
  algorithm  an Algorithm instance (default: Baseline, which runs every task once, no learning)
  apo        APO options, read by --algorithm apo | apo-reflective
  config     Trainer options (nRunners, workerMode, gateway, initialResources, adapter, hooks, reward, ...) and
             store / storeUrl / token; command-line flags override them

Example:
  // train.ts
  export const agent = async (task, resources) => ...;  // resources.prompt.template: the prompt APO optimises
  export const train = 'train.jsonl';
  export const val = 'val.jsonl';
  export const apo = { gradientModel: 'gpt-5-mini', applyEditModel: 'gpt-4.1-mini' };
  export const config = { nRunners: 4, initialResources: { prompt: { resourceType: 'prompt_template', template: '...', engine: 'f-string' } } };

  NODE_OPTIONS="--import @agl/openai/register" npx agl train train.ts --algorithm apo   # the preload traces the LLM calls

Training model weights (GRPO, RLOO, rejection sampling) through the Tinker API ($TINKER_API_KEY; a self-hosted
Tinker-compatible server with --tinker-url or $TINKER_BASE_URL):
  npx agl train train.ts --algorithm grpo --backend tinker --base-model Qwen/Qwen3-4B-Instruct-2507 --rounds 10
The command starts a gateway in Tinker mode and publishes the LLM resource \`main_llm\` (a proxy_llm): the agent calls
the model at llmBaseUrl(resources, rolloutId, attemptId) from @agl/trainer (process agents: $AGL_OPENAI_BASE_URL and
$AGL_MODEL), so every round samples the latest weights with token ids and logprobs recorded. Each round prints its
mean reward, skipped groups, loss, tokens and time; a killed run resumes (load_weights) when rerun as it was started.

At the end it prints the rollouts by status, the mean final reward, where the store is and the commands that show
the run (--quiet: nothing, --json: one JSON line).`;

/** `agl train <entry>`: load the entry module and run `Trainer.fit` with its agent, algorithm and datasets. */
export function trainCommand(io: CliIo = processIo): Command {
  return withReleaseFlags(
    withTinkerTrainFlags(
      new Command('train')
        .description(
          'train an agent: the entry module exports `agent` and optionally `train`, `val`, `algorithm`, `apo`, `config`',
        )
        .addHelpText('after', ENTRY_HELP)
        .argument('<entry>', 'a .ts or .js module')
        .option('--store-url <url>', 'use a running `agl store serve` instead of the embedded store')
        .option('--store <path>', 'embedded SQLite store file (default .agl/store.sqlite)')
        .option('--token <token>', 'bearer token of the store server (default $AGL_STORE_TOKEN)')
        .option(
          '--train <file>',
          "training tasks (.jsonl or .json, e.g. from `agl dataset build`) instead of the entry's `train`",
        )
        .option('--val <file>', "validation tasks (.jsonl or .json) instead of the entry's `val`")
        .option('--runners <n>', 'number of runner workers', positiveInt)
        .addOption(
          new Option('--worker-mode <mode>', 'run workers in this process or as child processes').choices([
            'async',
            'process',
          ]),
        )
        .option(
          '--gateway',
          'process agents: route their LLM calls through a loopback AGL gateway (spans with token ids)',
        )
        .option('--no-progress', 'no live progress display')
        .option('--json', 'print the result as JSON')
        .option('--quiet', 'print nothing but errors: no progress, no summary')
        .option(
          '--release',
          'with --algorithm apo (its winner) or --backend tinker (the final sampler weights): what was trained becomes the candidate of a release against the latest (a share of live traffic at a time) instead of the latest',
        )
        .addOption(
          new Option(
            '--algorithm <name>',
            "algorithm instead of the entry's `algorithm` export (apo reads the entry's `apo` options)",
          ).choices([...TRAIN_ALGORITHMS]),
        ),
    ),
  ).action(async (entry: string, flags: TrainFlags) => {
    const { path, module } = await loadEntryModule(entry);
    if (module.agent === undefined) {
      throw new UserError(
        `${path} does not export \`agent\`; add \`export const agent = async (task, resources) => reward\` (or litAgent / processAgent).`,
      );
    }
    const config = (module.config ?? {}) as TrainEntryConfig;
    const { storeUrl, store, token, ...trainerConfig } = config;
    const tinker = resolveTinkerAlgorithm(flags.algorithm, flags, io, flags.quiet === true);
    const display = flags.progress && !flags.quiet ? createProgressDisplay({ title: 'agl train' }) : null;
    const options: TrainerOptions = {
      ...trainerConfig,
      // The CLI prints its own progress display and summary (or JSON).
      quiet: true,
      algorithm: tinker?.algorithm ?? resolveTrainAlgorithm({ name: flags.algorithm, module, io }),
      store: flags.storeUrl ?? flags.store ?? storeUrl ?? (process.env.AGL_STORE_URL || undefined) ?? store,
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
    requireReleaseFlag(flags);
    const releaseTarget = {
      ...(typeof options.store === 'string' ? { store: options.store } : {}),
      ...(options.storeToken ? { token: options.storeToken } : {}),
    };
    const latest = flags.release ? await latestBeforeTraining(releaseTarget, flags) : null;
    const abort = new AbortController();
    const onSignal = (): void => abort.abort(new Error('interrupted'));
    process.once('SIGINT', onSignal);
    try {
      if (tinker && !flags.quiet) await announceTinkerResume(tinker, flags.rounds ?? 10, io);
      const result = await new Trainer(options).fit(module.agent as never, {
        train: flags.train ?? (module.train as DatasetSource | undefined),
        val: flags.val ?? (module.val as DatasetSource | undefined),
        signal: abort.signal,
      });
      await display?.finish(result.progress);
      const release = latest ? await releaseTrainedWinner(releaseTarget, options.algorithm, latest, flags) : null;
      if (flags.json) {
        io.out(
          JSON.stringify({
            runner: result.runner,
            progress: result.progress,
            duration_seconds: result.durationSeconds,
            store: result.storeLocation,
            ...(release ? { release: releaseToWire(release) } : {}),
            ...(tinker ? { tinker: tinkerRunReport(tinker).json } : {}),
          }),
        );
      } else if (!flags.quiet) {
        reportTrainAlgorithm(options.algorithm, io, release);
        if (tinker) for (const line of tinkerRunReport(tinker).lines) io.out(line);
        const summary = formatRunSummary({
          label: 'agl train',
          progress: result.progress,
          durationSeconds: result.durationSeconds,
          location: result.storeLocation,
        });
        for (const line of summary) io.out(line);
      }
    } catch (err) {
      await display?.finish(null);
      throw err;
    } finally {
      process.removeListener('SIGINT', onSignal);
    }
  });
}
