import type { Attempt, AttemptStatus, Rollout, Worker } from '@agl/core/schema';

/** A fresh worker record with status `unknown`. */
export function newWorker(workerId: string): Worker {
  return {
    workerId,
    status: 'unknown',
    heartbeatStats: null,
    lastHeartbeatTime: null,
    lastDequeueTime: null,
    lastBusyTime: null,
    lastIdleTime: null,
    currentRolloutId: null,
    currentAttemptId: null,
  };
}

/**
 * Worker status derived from an attempt (AGL 0.3 §2.7): succeeded/failed → idle; timeout/unresponsive → unknown;
 * preparing/running → busy with the assignment. Only these fields change, so heartbeat data survives.
 */
export function syncWorkerFromAttempt(worker: Worker, attempt: Attempt, now: number, fromDequeue: boolean): Worker {
  const next: Worker = { ...worker };
  switch (attempt.status) {
    case 'succeeded':
    case 'failed':
      Object.assign(next, { status: 'idle', lastIdleTime: now, currentRolloutId: null, currentAttemptId: null });
      break;
    case 'timeout':
    case 'unresponsive':
      Object.assign(next, { status: 'unknown', lastIdleTime: now, currentRolloutId: null, currentAttemptId: null });
      break;
    default:
      Object.assign(next, {
        status: 'busy',
        lastBusyTime: now,
        currentRolloutId: attempt.rolloutId,
        currentAttemptId: attempt.attemptId,
      });
  }
  if (fromDequeue) next.lastDequeueTime = now;
  return next;
}

/** A dequeue with a worker id that found nothing: the worker becomes idle (unless it already was). */
export function syncWorkerOnEmptyDequeue(worker: Worker, now: number): Worker {
  if (worker.status === 'idle') return { ...worker, lastDequeueTime: now };
  return {
    ...worker,
    status: 'idle',
    lastIdleTime: now,
    lastDequeueTime: now,
    currentRolloutId: null,
    currentAttemptId: null,
  };
}

/**
 * The watchdog's verdict for a rollout's latest attempt (AGL 0.3 §2.6), or null: first the wall-clock timeout since
 * the attempt started, then silence since the last heartbeat (or since the start when there was none).
 */
export function watchdogVerdict(rollout: Rollout, attempt: Attempt, now: number): AttemptStatus | null {
  if (attempt.status !== 'preparing' && attempt.status !== 'running') return null;
  const { timeoutSeconds, unresponsiveSeconds } = rollout.config;
  if (timeoutSeconds != null && now - attempt.startTime > timeoutSeconds) return 'timeout';
  if (unresponsiveSeconds != null) {
    const since = attempt.lastHeartbeatTime ? attempt.lastHeartbeatTime : attempt.startTime;
    if (now - since > unresponsiveSeconds) return 'unresponsive';
  }
  return null;
}
