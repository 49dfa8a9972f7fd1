import { hostname, platform } from 'node:os';
import type { AttemptedRollout, Clock, LightningStore, NamedResources } from '@agl/core';
import type { RunnerLogger } from './hooks';
import type { IdleGate } from './idle-gate';

/** Counters one runner shares across its workers (also sent as heartbeat stats). */
export interface RunnerStats {
  started: number;
  succeeded: number;
  failed: number;
}

/** Options of {@link runWorkerLoop}. */
export interface WorkerLoopOptions {
  store: LightningStore;
  workerId: string;
  /** Runs one dequeued attempt and returns its status. */
  execute: (
    rollout: AttemptedRollout,
    resources: NamedResources,
    resourcesId: string | null,
  ) => Promise<'succeeded' | 'failed'>;
  /** Where the runner's idle workers wait for work (shared by its workers). */
  idle: IdleGate;
  /** Seconds between `updateWorker` heartbeats; ≤ 0 disables them. */
  heartbeatIntervalSeconds: number;
  /** Attempts left to this runner (shared by its workers); the loop ends at 0. */
  budget: { remaining: number };
  /**
   * Attempts running in this runner, by rollout id (shared by its workers). When the store hands out a rollout whose
   * previous attempt this runner is still winding down (its timeout fired in the store first), the new attempt waits
   * for it, so one runner never runs a rollout twice at once.
   */
  inFlight?: Map<string, Promise<unknown>>;
  stats: RunnerStats;
  signal: AbortSignal;
  logger: RunnerLogger;
  clock: Clock;
}

/**
 * One worker (AGL 0.3 `iter`): dequeue with the worker id, fetch the rollout's resources (pinned id, else the latest,
 * else none), execute, repeat until stopped. Before its first dequeue and after an empty one it waits at the runner's
 * {@link IdleGate} (the store's enqueue signal, or a poll interval without one).
 */
export async function runWorkerLoop(options: WorkerLoopOptions): Promise<void> {
  const { store, workerId, signal, logger, stats } = options;
  const stopHeartbeat = startWorkerHeartbeat(options);
  try {
    await store.updateWorker(workerId, { heartbeatStats: heartbeatStats(stats, options.clock) }).catch(() => undefined);
    // With an enqueue signal, ask it before the first dequeue too (it answers at once when work is queued).
    let mayHaveWork = !options.idle.signals;
    while (!signal.aborted) {
      if (!mayHaveWork) {
        await options.idle.wait();
        if (signal.aborted) break;
      }
      if (options.budget.remaining <= 0) break;
      options.budget.remaining -= 1;
      let rollout: AttemptedRollout | null = null;
      try {
        rollout = await store.dequeueRollout({ workerId });
      } catch (err) {
        if (signal.aborted) break;
        logger.warn(`${workerId}: dequeue failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      mayHaveWork = rollout !== null;
      if (!rollout) {
        options.budget.remaining += 1;
        continue;
      }
      stats.started += 1;
      const { resources, resourcesId } = await fetchResources(store, rollout, logger);
      const status = await runExclusive(options.inFlight, rollout.rolloutId, () =>
        options.execute(rollout, resources, resourcesId),
      );
      if (status === 'succeeded') stats.succeeded += 1;
      else stats.failed += 1;
    }
  } finally {
    stopHeartbeat();
  }
}

/** Runs `fn` after any attempt of the same rollout still in `inFlight` has ended, and registers it meanwhile. */
async function runExclusive<T>(
  inFlight: Map<string, Promise<unknown>> | undefined,
  rolloutId: string,
  fn: () => Promise<T>,
): Promise<T> {
  if (!inFlight) return fn();
  const previous = inFlight.get(rolloutId);
  const run = (async () => {
    if (previous) await previous.catch(() => undefined);
    return fn();
  })();
  inFlight.set(rolloutId, run);
  try {
    return await run;
  } finally {
    if (inFlight.get(rolloutId) === run) inFlight.delete(rolloutId);
  }
}

async function fetchResources(
  store: LightningStore,
  rollout: AttemptedRollout,
  logger: RunnerLogger,
): Promise<{ resources: NamedResources; resourcesId: string | null }> {
  try {
    const update = rollout.resourcesId
      ? await store.getResourcesById(rollout.resourcesId)
      : await store.getLatestResources();
    if (update) return { resources: update.resources, resourcesId: update.resourcesId };
    if (rollout.resourcesId)
      logger.warn(
        `rollout ${rollout.rolloutId} names resources ${rollout.resourcesId}, which the store does not have; running with none.`,
      );
  } catch (err) {
    logger.warn(
      `fetching resources for ${rollout.rolloutId} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return { resources: {}, resourcesId: rollout.resourcesId ?? null };
}

function heartbeatStats(stats: RunnerStats, clock: Clock): { [key: string]: string | number } {
  return {
    timestamp: new Date(clock.now() * 1000).toISOString(),
    host: hostname(),
    os: platform(),
    pid: process.pid,
    rollouts_started: stats.started,
    rollouts_succeeded: stats.succeeded,
    rollouts_failed: stats.failed,
  };
}

function startWorkerHeartbeat(options: WorkerLoopOptions): () => void {
  if (!(options.heartbeatIntervalSeconds > 0)) return () => undefined;
  const timer = setInterval(() => {
    options.store
      .updateWorker(options.workerId, { heartbeatStats: heartbeatStats(options.stats, options.clock) })
      .catch((err: unknown) => {
        options.logger.warn(
          `${options.workerId}: heartbeat failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      });
  }, options.heartbeatIntervalSeconds * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
