import { ConflictError, ValidationError } from '@agl/core/errors';
import {
  defaultRolloutConfig,
  newAttemptId,
  newRolloutId,
  type Attempt,
  type AttemptedRollout,
  type AttemptStatus,
  type EnqueueRolloutRequest,
  type JsonObject,
  type JsonValue,
  type RolloutConfig,
  type RolloutMode,
  type Rollout,
  type RolloutStatus,
  type Worker,
} from '@agl/core/schema';

/** A validated enqueue request (defaults not yet applied). */
type EnqueueRequest = Omit<EnqueueRolloutRequest, 'config'> & {
  input?: JsonValue;
  mode?: RolloutMode;
  config?: RolloutConfig | null;
  metadata?: JsonObject | null;
  /** A client-chosen id (`startRollout`). */
  rolloutId?: string;
  /** When the client saw the rollout start (`startRollout`). */
  startTime?: number;
  /** `resourcesId` as given, `null` included (`startRollout`'s production records). */
  keepResourcesId?: boolean;
};

/**
 * A new rollout record (AGL 0.3 defaults): the latest resources when none is named (unless `keepResourcesId`), a deep copy of the config (fresh
 * defaults when none), a shallow copy of the metadata (`{}` when none).
 */
export function newRolloutRecord(
  request: EnqueueRequest,
  status: RolloutStatus,
  now: number,
  latestResources: string | null,
): Rollout {
  return {
    rolloutId: request.rolloutId ?? newRolloutId(),
    input: request.input ?? null,
    startTime: request.startTime ?? now,
    endTime: null,
    mode: request.mode ?? null,
    resourcesId: request.keepResourcesId ? (request.resourcesId ?? null) : (request.resourcesId ?? latestResources),
    status,
    config: request.config ? structuredClone(request.config) : defaultRolloutConfig(),
    metadata: request.metadata ? { ...request.metadata } : {},
  };
}

/** A new `preparing` attempt. */
export function newAttemptRecord(
  rolloutId: string,
  sequenceId: number,
  workerId: string | null,
  now: number,
  attemptId: string = newAttemptId(),
): Attempt {
  return {
    rolloutId,
    attemptId,
    sequenceId,
    startTime: now,
    endTime: null,
    status: 'preparing',
    workerId,
    lastHeartbeatTime: null,
    metadata: null,
  };
}

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

/**
 * `startRollout` with a client-chosen `rolloutId` that the store already has: the same attempt id (or none) is a
 * retry and gets the stored rollout back; another attempt id is a conflict (409).
 */
export function repeatedStart(
  rollout: Rollout,
  latest: Attempt | null,
  attemptId: string | undefined,
): AttemptedRollout {
  if (latest && (attemptId === undefined || attemptId === latest.attemptId)) return { ...rollout, attempt: latest };
  throw new ConflictError(
    'rolloutId',
    `startRollout: rollout ${rollout.rolloutId} already exists with attempt ${JSON.stringify(latest?.attemptId ?? null)}, not ${JSON.stringify(attemptId)}; choose a new rolloutId, or retry with the attempt id it was started with.`,
  );
}

/**
 * The time an `updateAttempt` status change happens at: the client's `endTime` with a terminal status (a record
 * delivered late keeps the time it happened), else the store's clock. `endTime` with any other status is refused.
 */
export function statusChangeTime(update: { status?: AttemptStatus; endTime?: number }, now: number): number {
  if (update.endTime === undefined) return now;
  if (update.status === 'succeeded' || update.status === 'failed') return update.endTime;
  throw new ValidationError(
    `updateAttempt: end_time is only taken with a terminal status (succeeded or failed), got status ${JSON.stringify(update.status ?? null)}; drop end_time or send the final status with it.`,
    [{ path: 'endTime', message: 'needs a terminal status' }],
  );
}

/** One key per (rollout, attempt) pair, for maps and sets keyed by attempt. */
export function attemptKey(ref: { rolloutId: string; attemptId: string }): string {
  return `${ref.rolloutId}\u0000${ref.attemptId}`;
}
