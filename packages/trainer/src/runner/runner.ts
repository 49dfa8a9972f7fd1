import { setMaxListeners } from 'node:events';
import { availableParallelism } from 'node:os';
import { systemClock, type AttemptedRollout, type Clock, type LightningStore, type NamedResources } from '@agl/core';
import { UserError } from '@agl/core/errors';
import type { RolloutTracer } from '@agl/core/tracer';
import { toLitAgent, type AgentLike } from '../agent/lit-agent';
import { ProcessAgent } from '../agent/process-agent';
import { executeInProcess, type ExecuteInProcessOptions } from './execute-in-process';
import { executeProcess } from './execute-process';
import { stderrLogger, type RewardHook, type RunnerHooks, type RunnerLogger } from './hooks';
import { startLoopbackServer, type LoopbackServer } from './loopback-server';
import type { ProcessEndpoints } from './process-env';
import { IdleGate } from './idle-gate';
import { runWorkerLoop, type RunnerStats } from './worker-loop';
import { superviseWorkerProcesses, type AgentModuleRef } from './worker-processes';
import { superviseWorkerThreads } from './worker-threads';

/** What differs between the attempts one executor runs. */
type AttemptArgs = Pick<ExecuteInProcessOptions, 'rollout' | 'resources' | 'resourcesId' | 'workerId' | 'signal'>;

/** Options of {@link Runner}. */
export interface RunnerOptions {
  store: LightningStore;
  /** A rollout function, a LitAgent, or a `processAgent({ command })`. */
  agent?: AgentLike | ProcessAgent;
  /** Concurrent workers (default 1), named `Worker-{offset+1}` … */
  nWorkers?: number;
  workerIdOffset?: number;
  /**
   * `async` (default): workers are async loops in this process. `process`: each worker is a child Node process that
   * loads `agentModule` and talks to the store over HTTP; a crashed worker is replaced, and its attempt is closed by
   * the store's watchdog (`unresponsiveSeconds`) and retried per the rollout config. `thread`: the async workers are
   * spread over `threads` worker threads of this process, each loading `agentModule` and opening its own connection
   * to the store (the same file when the store reports `capabilities.sqliteFile`, otherwise the store's HTTP endpoint), so agents use
   * every core without a process per worker.
   */
  workerMode?: 'async' | 'process' | 'thread';
  /** Module exporting the agent, for `workerMode: 'process'` and `'thread'`. */
  agentModule?: AgentModuleRef;
  /** Worker threads for `workerMode: 'thread'` (default: one per CPU core); the workers are split evenly over them. */
  threads?: number;
  /** The store's HTTP endpoint for child processes; without it the runner serves `store` on a loopback port itself. */
  storeEndpoint?: ProcessEndpoints;
  /**
   * Process agents only: start a loopback AGL gateway (same token) and give agents its rollout-scoped URL as
   * `AGL_OPENAI_BASE_URL`, so their LLM calls are recorded with token ids without any tracing in the agent. Default
   * false (agents get the LLM resource's endpoint directly).
   */
  gateway?: boolean;
  hooks?: RunnerHooks;
  reward?: RewardHook;
  logger?: RunnerLogger;
  clock?: Clock;
  tracer?: RolloutTracer;
  /**
   * Seconds between polls of an empty queue (default 0.5). With a store that signals enqueues (`waitForQueue`: every
   * AGL backend and `agl store serve`), idle workers sleep until one instead, re-polling after ten intervals (5 s cap).
   */
  pollIntervalSeconds?: number;
  /** Seconds between worker and attempt heartbeats (default 10; ≤ 0 disables). */
  heartbeatIntervalSeconds?: number;
  /** Stop after this many attempts in total (default unlimited). */
  maxRollouts?: number;
}

/**
 * Runs an agent against a store with N workers: dequeue (`Worker-{n}`), fetch resources, run inside the rollout
 * context, record exceptions, finish the attempt (the store applies retries). `run()` resolves after `stop()` (or
 * the signal) once in-flight attempts finish, or when `maxRollouts` is reached.
 */
export class Runner {
  readonly #options: RunnerOptions;
  readonly #stop = new AbortController();
  readonly stats: RunnerStats = { started: 0, succeeded: 0, failed: 0 };
  readonly #ready: { promise: Promise<void>; resolve: () => void };

  constructor(options: RunnerOptions) {
    const nWorkers = options.nWorkers ?? 1;
    if (!Number.isInteger(nWorkers) || nWorkers < 1)
      throw new UserError(`Runner nWorkers must be an integer ≥ 1; got ${String(options.nWorkers)}.`);
    const loaded = options.workerMode === 'process' || options.workerMode === 'thread';
    if (loaded && !options.agentModule) {
      throw new UserError(
        `Runner workerMode '${options.workerMode}' needs agentModule: { path: '/abs/agent.ts', exportName: 'agent' } so each worker ${options.workerMode} can load the agent.`,
      );
    }
    if (!loaded && options.agent === undefined)
      throw new UserError('Runner needs an agent (a rollout function, litAgent(...) or processAgent(...)).');
    if (options.threads !== undefined && (!Number.isInteger(options.threads) || options.threads < 1))
      throw new UserError(`Runner threads must be an integer ≥ 1; got ${String(options.threads)}.`);
    this.#options = options;
    let resolve!: () => void;
    this.#ready = { promise: new Promise<void>((r) => (resolve = r)), resolve };
  }

  /**
   * Resolves once `run()`'s workers can take rollouts: at once for async workers and worker processes (which report
   * nothing earlier), when every worker thread has loaded the agent and opened its store for `workerMode: 'thread'`,
   * and at the latest when `run()` ends.
   */
  get ready(): Promise<void> {
    return this.#ready.promise;
  }

  /** Ask the workers to stop after their current attempt. */
  stop(): void {
    this.#stop.abort(new Error('runner stopped'));
  }

  get stopped(): boolean {
    return this.#stop.signal.aborted;
  }

  /** Run until stopped (or `signal` aborts, or `maxRollouts` is reached). Returns the counters. */
  async run(options: { signal?: AbortSignal } = {}): Promise<RunnerStats> {
    const signal = options.signal ? AbortSignal.any([options.signal, this.#stop.signal]) : this.#stop.signal;
    const o = this.#options;
    // Idle workers wait on the shared signal (one listener each): lift Node's default of 10 for big runners.
    setMaxListeners(Math.max(10, 4 * (o.nWorkers ?? 1) + 10), signal);
    const logger = o.logger ?? stderrLogger;
    const clock = o.clock ?? systemClock;
    const nWorkers = o.nWorkers ?? 1;
    const offset = o.workerIdOffset ?? 0;
    const heartbeatIntervalSeconds = o.heartbeatIntervalSeconds ?? 10;
    // Runner threads open the same SQLite file themselves; any other store is reached over HTTP.
    const sqlitePath = o.workerMode === 'thread' ? (o.store.capabilities.sqliteFile ?? null) : null;
    const needsServer =
      o.workerMode === 'process' ||
      (o.workerMode === 'thread' && sqlitePath === null) ||
      ProcessAgent.isInstance(o.agent);
    const gateway = Boolean(o.gateway) && ProcessAgent.isInstance(o.agent);
    let loopback: LoopbackServer | undefined;
    if (needsServer && (!o.storeEndpoint || gateway))
      loopback = await startLoopbackServer({ store: o.store, storeEndpoint: o.storeEndpoint, gateway });
    const endpoints = loopback?.endpoints ?? o.storeEndpoint;
    try {
      if (o.workerMode !== 'thread') this.#ready.resolve();
      if (o.workerMode === 'process') {
        await superviseWorkerProcesses({
          agentModule: o.agentModule!,
          endpoints: endpoints!,
          nWorkers,
          workerIdOffset: offset,
          pollIntervalSeconds: o.pollIntervalSeconds ?? 0.5,
          heartbeatIntervalSeconds,
          maxRollouts: o.maxRollouts,
          store: o.store,
          stats: this.stats,
          signal,
          logger,
        });
        return this.stats;
      }
      if (o.workerMode === 'thread') {
        await superviseWorkerThreads({
          agentModule: o.agentModule!,
          store:
            sqlitePath !== null
              ? { kind: 'sqlite', path: sqlitePath }
              : { kind: 'http', url: endpoints!.storeUrl, token: endpoints!.token ?? null },
          threads: o.threads ?? availableParallelism(),
          nWorkers,
          workerIdOffset: offset,
          pollIntervalSeconds: o.pollIntervalSeconds ?? 0.5,
          heartbeatIntervalSeconds,
          maxRollouts: o.maxRollouts,
          stats: this.stats,
          signal,
          logger,
          onReady: this.#ready.resolve,
        });
        return this.stats;
      }
      const execute = this.#executor({ logger, clock, heartbeatIntervalSeconds, endpoints });
      const budget = { remaining: o.maxRollouts ?? Number.POSITIVE_INFINITY };
      const inFlight = new Map<string, Promise<unknown>>();
      const idle = new IdleGate(o.store, o.pollIntervalSeconds ?? 0.5, signal);
      const loops = Array.from({ length: nWorkers }, (_, i) => {
        const workerId = `Worker-${offset + i + 1}`;
        // Each worker's attempts listen on a signal of its own: Node's EventTarget walks its whole listener list on
        // every add, so 1,000 workers adding a listener per attempt to the shared signal made every attempt O(workers).
        const workerSignal = AbortSignal.any([signal]);
        return runWorkerLoop({
          store: o.store,
          workerId,
          execute: (rollout, resources, resourcesId) =>
            execute(rollout, resources, resourcesId, workerId, workerSignal),
          idle,
          heartbeatIntervalSeconds,
          budget,
          inFlight,
          stats: this.stats,
          signal,
          logger,
          clock,
        });
      });
      await Promise.all(loops);
      return this.stats;
    } finally {
      this.#ready.resolve(); // never left pending when run() ends early
      await loopback?.close();
    }
  }

  #executor(env: {
    logger: RunnerLogger;
    clock: Clock;
    heartbeatIntervalSeconds: number;
    endpoints?: ProcessEndpoints;
  }) {
    const o = this.#options;
    const shared = { ...env, store: o.store, hooks: o.hooks ?? {}, reward: o.reward };
    let run: (attempt: AttemptArgs) => Promise<'succeeded' | 'failed'>;
    if (ProcessAgent.isInstance(o.agent)) {
      const agent = o.agent;
      run = (attempt) => executeProcess({ ...shared, ...attempt, agent, endpoints: env.endpoints! });
    } else {
      const agent = toLitAgent(o.agent as AgentLike);
      run = (attempt) => executeInProcess({ ...shared, ...attempt, agent, tracer: o.tracer });
    }
    return (
      rollout: AttemptedRollout,
      resources: NamedResources,
      resourcesId: string | null,
      workerId: string,
      signal: AbortSignal,
    ) => run({ rollout, resources, resourcesId, workerId, signal });
  }
}
