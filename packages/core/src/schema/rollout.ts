import { z } from 'zod';
import { AttemptStatus, RolloutMode, RolloutStatus } from './enums';
import { JsonObject, JsonValue } from './json';

/**
 * Retry and timeout policy of a rollout (AGL 0.3 §1.3). With the defaults there are no retries and no timeouts.
 */
export const RolloutConfig = z.object({
  /** Maximum wall time of one attempt in seconds, from `attempt.startTime`; `null` = no limit. */
  timeoutSeconds: z.number().positive().nullable().default(null),
  /** Maximum silence in seconds since the last heartbeat (or since the start when there was none); `null` = no limit. */
  unresponsiveSeconds: z.number().positive().nullable().default(null),
  /** Total attempts allowed, the first included. Integer ≥ 1. */
  maxAttempts: z.number().int().min(1).default(1),
  /** Attempt statuses that trigger a retry; meaningful values are `failed`, `timeout` and `unresponsive`. */
  retryCondition: z.array(AttemptStatus).default([]),
});
/** @see {@link RolloutConfig} */
export type RolloutConfig = z.infer<typeof RolloutConfig>;
/** What callers may pass: every field optional. */
export type RolloutConfigInput = z.input<typeof RolloutConfig>;

/** A fresh default {@link RolloutConfig}. */
export const defaultRolloutConfig = (): RolloutConfig => RolloutConfig.parse({});

/** One task execution request and its lifecycle (AGL 0.3 §1.4). */
export const Rollout = z.object({
  /** `ro-` id, opaque. */
  rolloutId: z.string().min(1),
  /** The task input: any JSON, may be `null`. */
  input: JsonValue,
  /** Creation time, seconds since the epoch (float). */
  startTime: z.number(),
  /** Set whenever the status becomes succeeded, failed or cancelled; seconds since the epoch. */
  endTime: z.number().nullable().default(null),
  /** train / val / test, or `null`. */
  mode: RolloutMode.default(null),
  /** The resources version this rollout runs with; defaults to the latest at creation. */
  resourcesId: z.string().nullable().default(null),
  /** Current status; follows the latest attempt. */
  status: RolloutStatus.default('queuing'),
  /** Retry and timeout policy. */
  config: RolloutConfig.default(defaultRolloutConfig),
  /** Free-form metadata; `taskId` conventions: `metadata.task_id` groups rollouts of the same task (GRPO). */
  metadata: JsonObject.nullable().default({}),
});
/** @see {@link Rollout} */
export type Rollout = z.infer<typeof Rollout>;

/** One execution attempt of a rollout. */
export const Attempt = z.object({
  /** Owning rollout. */
  rolloutId: z.string().min(1),
  /** `at-` id, opaque. */
  attemptId: z.string().min(1),
  /** 1 for the first attempt, then (number of existing attempts) + 1. */
  sequenceId: z.number().int().min(1),
  /** Creation time, seconds since the epoch. */
  startTime: z.number(),
  /** Set only when the status becomes `failed` or `succeeded`; seconds since the epoch. */
  endTime: z.number().nullable().default(null),
  /** Current status. */
  status: AttemptStatus.default('preparing'),
  /** Worker that runs the attempt. */
  workerId: z.string().nullable().default(null),
  /** Time of the last span (heartbeat), seconds since the epoch. */
  lastHeartbeatTime: z.number().nullable().default(null),
  /** Free-form metadata. */
  metadata: JsonObject.nullable().default(null),
});
/** @see {@link Attempt} */
export type Attempt = z.infer<typeof Attempt>;

/** A rollout with its latest attempt attached. On the wire, the presence of `attempt` tells the two apart. */
export const AttemptedRollout = Rollout.extend({
  /** The latest attempt (highest `sequenceId`); its `rolloutId` equals the rollout's. */
  attempt: Attempt,
}).refine((value) => value.attempt.rolloutId === value.rolloutId, {
  message: 'attempt.rollout_id must equal rollout_id',
  path: ['attempt', 'rolloutId'],
});
/** @see {@link AttemptedRollout} */
export type AttemptedRollout = z.infer<typeof AttemptedRollout>;

/** What `enqueueRollout(s)` and `startRollout` take. */
export const EnqueueRolloutRequest = z.object({
  /** The task input (required key; may be `null`). */
  input: JsonValue,
  /** train / val / test. */
  mode: RolloutMode.optional(),
  /** Pin to a resources version; default the latest. */
  resourcesId: z.string().nullable().optional(),
  /** Retry and timeout policy. */
  config: RolloutConfig.nullable().optional(),
  /** Metadata, shallow-copied; `{}` when missing. */
  metadata: JsonObject.nullable().optional(),
});
/** @see {@link EnqueueRolloutRequest} */
export type EnqueueRolloutRequest = z.input<typeof EnqueueRolloutRequest>;

/** True when a query result item carries its latest attempt. */
export function isAttemptedRollout(value: Rollout | AttemptedRollout): value is AttemptedRollout {
  return 'attempt' in value && (value as AttemptedRollout).attempt != null;
}
