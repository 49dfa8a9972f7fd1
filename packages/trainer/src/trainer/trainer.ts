import type { LightningStore, NamedResourcesInput } from '@agl/core';
import { UserError } from '@agl/core/errors';
import type { RolloutTracer } from '@agl/core/tracer';
import type { AgentLike } from '../agent/lit-agent';
import type { ProcessAgent } from '../agent/process-agent';
import { loadDataset, type DatasetSource } from '../dataset/load-dataset';
import type { RewardHook, RunnerHooks, RunnerLogger } from '../runner/hooks';
import { Runner } from '../runner/runner';
import type { RunnerStats } from '../runner/worker-loop';
import type { AgentModuleRef } from '../runner/worker-processes';
import type { Algorithm, TraceAdapter } from '../algorithms/algorithm';
import { Baseline } from '../algorithms/baseline';
import { defaultAdapter } from './default-adapter';
import { openStore } from './open-store';
import { watchProgress, type ProgressSnapshot } from './progress';
import { formatRunSummary, periodicProgressLines } from './run-summary';
import { trackRunRollouts } from './run-rollouts';

/** Options of {@link Trainer}. */
export interface TrainerOptions {
  /** Default: `new Baseline()`. */
  algorithm?: Algorithm;
  /** A store instance, a store URL (`StoreClient`), or a SQLite path; default `.agl/store.sqlite` (embedded). */
  store?: LightningStore | string;
  /** Bearer token for a store URL. */
  storeToken?: string;
  /** Runner workers (default 1). */
  nRunners?: number;
  /** `process` runs each runner in its own Node process, `thread` spreads them over worker threads (both need `agentModule`). */
  workerMode?: 'async' | 'process' | 'thread';
  agentModule?: AgentModuleRef;
  /** Worker threads for `workerMode: 'thread'` (default one per CPU core). */
  threads?: number;
  /** Process agents: route their LLM calls through a loopback AGL gateway (see `RunnerOptions.gateway`). */
  gateway?: boolean;
  adapter?: TraceAdapter;
  initialResources?: NamedResourcesInput;
  hooks?: RunnerHooks;
  reward?: RewardHook;
  logger?: RunnerLogger;
  tracer?: RolloutTracer;
  pollIntervalSeconds?: number;
  heartbeatIntervalSeconds?: number;
  /** Called about once per `progressIntervalSeconds` (default 1) and once at the end. */
  onProgress?: (snapshot: ProgressSnapshot) => void;
  progressIntervalSeconds?: number;
  /**
   * No output. By default `fit` and `dev` write to stderr a progress line every 10 s of a long run, and at the end a
   * summary: rollouts by status, the mean final reward, where the store is, and the `agl` commands that show the run.
   */
  quiet?: boolean;
}

/** What `fit` and `dev` return. */
export interface FitResult {
  runner: RunnerStats;
  progress: ProgressSnapshot | null;
  durationSeconds: number;
  /** The SQLite file or URL the run wrote to; `null` for a store instance that does not say (memory, PostgreSQL). */
  storeLocation: string | null;
  /** The ids of the rollouts this run made (its algorithm enqueued), which its progress and summary count. */
  rolloutIds: string[];
}

/**
 * Wires an algorithm, a store and N runners (AGL 0.3 `Trainer`): `fit` runs the algorithm to completion while the
 * runners execute the agent, then stops the runners; `dev` does the same with `Baseline` (no learning).
 */
export class Trainer {
  readonly #options: TrainerOptions;

  constructor(options: TrainerOptions = {}) {
    const n = options.nRunners ?? 1;
    if (!Number.isInteger(n) || n < 1)
      throw new UserError(`Trainer nRunners must be an integer ≥ 1; got ${String(options.nRunners)}.`);
    this.#options = options;
  }

  /** Train `agent` on `train` (and validate on `val`) with the configured algorithm. */
  async fit(
    agent: AgentLike | ProcessAgent | undefined,
    data: { train?: DatasetSource; val?: DatasetSource; signal?: AbortSignal } = {},
  ): Promise<FitResult> {
    return this.#execute('fit', agent, this.#options.algorithm ?? new Baseline(), data);
  }

  /**
   * Run `dataset` (then `val`) once with `Baseline` (or the configured algorithm when it is a Baseline): a dry run, no
   * learning. Its rollouts have mode `val` (the agent's `validationRollout` runs), so they never pass for training data.
   * AGL 0.3's `dev(agent, train, val)` labels its train dataset `train`; here `dev` takes no train dataset.
   */
  async dev(
    agent: AgentLike | ProcessAgent | undefined,
    data: { dataset?: DatasetSource; val?: DatasetSource; signal?: AbortSignal } = {},
  ): Promise<FitResult> {
    const algorithm = this.#options.algorithm instanceof Baseline ? this.#options.algorithm : new Baseline();
    const [dataset, val] = await Promise.all([loadDataset(data.dataset), loadDataset(data.val)]);
    return this.#execute('dev', agent, algorithm, { train: [], val: [...dataset, ...val], signal: data.signal });
  }

  async #execute(
    label: string,
    agent: AgentLike | ProcessAgent | undefined,
    algorithm: Algorithm,
    data: { train?: DatasetSource; val?: DatasetSource; signal?: AbortSignal },
  ): Promise<FitResult> {
    const o = this.#options;
    const started = Date.now();
    const [train, val] = await Promise.all([loadDataset(data.train), loadDataset(data.val)]);
    const write = (line: string): void => void process.stderr.write(`${line}\n`);
    const printProgress = o.quiet ? undefined : periodicProgressLines(write, label);
    const onProgress =
      printProgress && o.onProgress
        ? (s: ProgressSnapshot) => {
            printProgress(s);
            o.onProgress?.(s);
          }
        : (printProgress ?? o.onProgress);
    const opened = await openStore({ store: o.store, token: o.storeToken });
    const stop = new AbortController();
    const signal = data.signal ? AbortSignal.any([data.signal, stop.signal]) : stop.signal;
    const runner = new Runner({
      store: opened.store,
      agent,
      nWorkers: o.nRunners ?? 1,
      workerMode: o.workerMode,
      agentModule: o.agentModule,
      threads: o.threads,
      gateway: o.gateway,
      storeEndpoint: opened.url ? { storeUrl: opened.url, token: opened.token } : undefined,
      hooks: o.hooks,
      reward: o.reward,
      logger: o.logger,
      tracer: o.tracer,
      pollIntervalSeconds: o.pollIntervalSeconds ?? 0.05,
      heartbeatIntervalSeconds: o.heartbeatIntervalSeconds,
    });
    // The run's own rollouts: progress and the summary count these, not what the store held before (production traffic,
    // earlier runs) or what other processes add meanwhile.
    const made = trackRunRollouts(opened.store);
    const watcher = watchProgress({
      rolloutIds: made.ids,
      store: opened.store,
      intervalSeconds: o.progressIntervalSeconds ?? (o.onProgress ? 1 : 5),
      onProgress,
      startedAt: started,
    });
    const running = runner.run({ signal });
    let runnerError: unknown;
    running.catch((err: unknown) => {
      runnerError = err;
      stop.abort(err);
    });
    let progress: ProgressSnapshot | null = null;
    try {
      await algorithm.run({
        store: made.store,
        train,
        val,
        adapter: o.adapter ?? (await defaultAdapter()),
        initialResources: o.initialResources,
        signal,
      });
      if (runnerError) throw runnerError;
    } finally {
      runner.stop();
      await running.catch(() => undefined);
      progress = await watcher.stop();
      if (opened.owned) await opened.store.close();
    }
    const result: FitResult = {
      runner: runner.stats,
      progress,
      durationSeconds: (Date.now() - started) / 1000,
      storeLocation: opened.location,
      rolloutIds: [...made.ids],
    };
    if (!o.quiet)
      for (const line of formatRunSummary({
        label,
        progress,
        durationSeconds: result.durationSeconds,
        location: opened.location,
      }))
        write(line);
    return result;
  }
}
