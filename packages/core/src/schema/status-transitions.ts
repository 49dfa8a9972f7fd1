import { InvalidTransitionError } from '../errors/invalid-transition-error';
import type { AttemptStatus, RolloutStatus } from './enums';

/**
 * Every rollout status change AGL allows, from → to. Staying in the same status is always allowed (idempotent
 * updates). AGL 0.3 validates nothing; this table keeps every transition its API produces and its conformance checklist
 * exercises, and refuses moves out of a terminal state except an explicit re-queue.
 */
export const ROLLOUT_TRANSITIONS: Readonly<Record<RolloutStatus, readonly RolloutStatus[]>> = {
  queuing: ['preparing', 'succeeded', 'failed', 'cancelled', 'requeuing'],
  preparing: ['running', 'succeeded', 'failed', 'cancelled', 'requeuing', 'queuing'],
  running: ['preparing', 'succeeded', 'failed', 'cancelled', 'requeuing', 'queuing'],
  requeuing: ['preparing', 'running', 'succeeded', 'failed', 'cancelled', 'queuing'],
  succeeded: ['queuing', 'requeuing'],
  failed: ['queuing', 'requeuing'],
  cancelled: ['queuing', 'requeuing'],
};

/**
 * Every attempt status change AGL allows. A late span revives an `unresponsive` attempt; `timeout`, `succeeded` and
 * `failed` are final.
 */
export const ATTEMPT_TRANSITIONS: Readonly<Record<AttemptStatus, readonly AttemptStatus[]>> = {
  preparing: ['running', 'succeeded', 'failed', 'unresponsive', 'timeout'],
  running: ['succeeded', 'failed', 'unresponsive', 'timeout'],
  unresponsive: ['running', 'succeeded', 'failed', 'timeout'],
  timeout: [],
  succeeded: [],
  failed: [],
};

/** True when a rollout may move from `from` to `to`. */
export function canTransitionRollout(from: RolloutStatus, to: RolloutStatus): boolean {
  return from === to || ROLLOUT_TRANSITIONS[from].includes(to);
}

/** True when an attempt may move from `from` to `to`. */
export function canTransitionAttempt(from: AttemptStatus, to: AttemptStatus): boolean {
  return from === to || ATTEMPT_TRANSITIONS[from].includes(to);
}

/** Throws {@link InvalidTransitionError} naming both states when the rollout move is not allowed. */
export function assertRolloutTransition(rolloutId: string, from: RolloutStatus, to: RolloutStatus): void {
  if (!canTransitionRollout(from, to)) throw new InvalidTransitionError('rollout', rolloutId, from, to);
}

/** Throws {@link InvalidTransitionError} naming both states when the attempt move is not allowed. */
export function assertAttemptTransition(attemptId: string, from: AttemptStatus, to: AttemptStatus): void {
  if (!canTransitionAttempt(from, to)) throw new InvalidTransitionError('attempt', attemptId, from, to);
}

/**
 * The rollout status implied by its latest attempt (AGL 0.3 `rollout_status_from_attempt`): preparing, running and
 * succeeded carry over; failed, timeout and unresponsive become `requeuing` when the retry policy allows another
 * attempt, otherwise `failed`.
 */
export function rolloutStatusFromAttempt(
  attemptStatus: AttemptStatus,
  attemptSequenceId: number,
  config: { maxAttempts: number; retryCondition: readonly AttemptStatus[] },
): RolloutStatus {
  switch (attemptStatus) {
    case 'preparing':
    case 'running':
    case 'succeeded':
      return attemptStatus;
    case 'failed':
    case 'timeout':
    case 'unresponsive':
      return config.retryCondition.includes(attemptStatus) && attemptSequenceId < config.maxAttempts
        ? 'requeuing'
        : 'failed';
  }
}
