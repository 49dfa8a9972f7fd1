import type { Clock, LightningStore } from '@agl/core';
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
