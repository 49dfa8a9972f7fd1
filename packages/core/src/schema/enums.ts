import { z } from 'zod';

/**
 * Lifecycle of a rollout (AGL 0.3 §1.2). `queuing` is the initial state; `preparing` means claimed with an attempt
 * created; `running` means the first span arrived; `requeuing` waits for a retry; the last three are terminal.
 */
export const RolloutStatus = z.enum([
  'queuing',
  'preparing',
  'running',
  'succeeded',
  'failed',
  'cancelled',
  'requeuing',
]);
/** @see {@link RolloutStatus} */
export type RolloutStatus = z.infer<typeof RolloutStatus>;

/**
 * Lifecycle of one attempt. `unresponsive`: no heartbeat (span) for `unresponsiveSeconds`; `timeout`: the attempt
 * ran longer than `timeoutSeconds`.
 */
export const AttemptStatus = z.enum(['preparing', 'running', 'succeeded', 'failed', 'unresponsive', 'timeout']);
/** @see {@link AttemptStatus} */
export type AttemptStatus = z.infer<typeof AttemptStatus>;

/** Derived status of a runner worker; never set directly. */
export const WorkerStatus = z.enum(['idle', 'busy', 'unknown']);
/** @see {@link WorkerStatus} */
export type WorkerStatus = z.infer<typeof WorkerStatus>;

/** What a rollout is for: training, validation or test; `null` when unspecified. */
export const RolloutMode = z.enum(['train', 'val', 'test']).nullable();
/** @see {@link RolloutMode} */
export type RolloutMode = z.infer<typeof RolloutMode>;

/** OpenTelemetry span status code. */
export const StatusCode = z.enum(['UNSET', 'OK', 'ERROR']);
/** @see {@link StatusCode} */
export type StatusCode = z.infer<typeof StatusCode>;

/** Rollout statuses waiting in the queue. */
export const QUEUING_STATUSES: readonly RolloutStatus[] = ['queuing', 'requeuing'];
/** Rollout statuses with an attempt in progress (the watchdog's candidates). */
export const RUNNING_STATUSES: readonly RolloutStatus[] = ['preparing', 'running'];
/** Terminal rollout statuses: `waitForRollouts` returns once a rollout reaches one of them. */
export const TERMINAL_STATUSES: readonly RolloutStatus[] = ['succeeded', 'failed', 'cancelled'];

/** True when the rollout status is terminal (succeeded, failed or cancelled). */
export function isTerminalStatus(status: RolloutStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
