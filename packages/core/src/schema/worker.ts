import { z } from 'zod';
import { WorkerStatus } from './enums';
import { JsonObject } from './json';

/** A runner worker as the store sees it (AGL 0.3 §1.5). Status is derived from its attempts. */
export const Worker = z.object({
  /** Any string; runners use `Worker-{n}`. */
  workerId: z.string().min(1),
  /** Derived: busy while it holds a preparing/running attempt, idle after one finishes, unknown otherwise. */
  status: WorkerStatus.default('unknown'),
  /** Last system statistics sent with a heartbeat. */
  heartbeatStats: JsonObject.nullable().default(null),
  /** Seconds since the epoch. */
  lastHeartbeatTime: z.number().nullable().default(null),
  /** Seconds since the epoch. */
  lastDequeueTime: z.number().nullable().default(null),
  /** Seconds since the epoch. */
  lastBusyTime: z.number().nullable().default(null),
  /** Seconds since the epoch. */
  lastIdleTime: z.number().nullable().default(null),
  /** Rollout the worker is busy with. */
  currentRolloutId: z.string().nullable().default(null),
  /** Attempt the worker is busy with. */
  currentAttemptId: z.string().nullable().default(null),
});
/** @see {@link Worker} */
export type Worker = z.infer<typeof Worker>;
