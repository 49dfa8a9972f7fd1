import type { AttemptedRollout, Clock, LightningStore } from '@agl/core';
import type { RolloutContext, RolloutTracer } from '@agl/core/tracer';
import type { RunnerLogger } from './hooks';

/**
 * Keeps an attempt alive while its agent runs: sets `lastHeartbeatTime` every `intervalSeconds`, so the store's
 * watchdog (`unresponsiveSeconds`) only fires when the worker is really gone.
 */
export function startAttemptHeartbeat(options: {
  store: LightningStore;
  rolloutId: string;
  attemptId: string;
  intervalSeconds: number;
  clock: Clock;
  logger: RunnerLogger;
}): () => void {
  const { store, rolloutId, attemptId, intervalSeconds, clock, logger } = options;
  if (!(intervalSeconds > 0)) return () => undefined;
  let stopped = false;
  const timer = setInterval(() => {
    store.updateAttempt(rolloutId, attemptId, { lastHeartbeatTime: clock.now() }).catch((err: unknown) => {
      if (!stopped)
        logger.warn(
          `attempt heartbeat for ${rolloutId}/${attemptId} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
    });
  }, intervalSeconds * 1000);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/**
 * What both executors start an attempt with: its ids, the hook event, the rollout context the agent runs in, and the
 * heartbeat (call `stopHeartbeat` when the attempt ends).
 */
export function beginAttempt<A>(options: {
  store: LightningStore;
  agent: A;
  rollout: AttemptedRollout;
  resourcesId: string | null;
  workerId: string;
  logger: RunnerLogger;
  clock: Clock;
  heartbeatIntervalSeconds: number;
  tracer?: RolloutTracer;
}): {
  rolloutId: string;
  attemptId: string;
  event: { agent: A; rollout: AttemptedRollout; workerId: string };
  ctx: RolloutContext;
  stopHeartbeat: () => void;
} {
  const { store, agent, rollout, workerId, logger } = options;
  const { rolloutId } = rollout;
  const { attemptId } = rollout.attempt;
  const ctx: RolloutContext = {
    rolloutId,
    attemptId,
    store,
    tracer: options.tracer,
    mode: rollout.mode,
    resourcesId: options.resourcesId,
    workerId,
  };
  const stopHeartbeat = startAttemptHeartbeat({
    store,
    rolloutId,
    attemptId,
    intervalSeconds: options.heartbeatIntervalSeconds,
    clock: options.clock,
    logger,
  });
  return { rolloutId, attemptId, event: { agent, rollout, workerId }, ctx, stopHeartbeat };
}
