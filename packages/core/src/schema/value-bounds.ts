import { ValidationError } from '../errors/validation-error';

/** Largest reward magnitude a store server accepts: rewards are scores, and ±1e308 overflows every mean and sum. */
export const MAX_REWARD_MAGNITUDE = 1e15;

/** What is wrong with `value` as a reward, or `null` when it is fine (a finite number within ±1e15). */
export function rewardProblem(value: number): string | null {
  if (!Number.isFinite(value)) return `must be a finite number (got ${String(value)})`;
  if (Math.abs(value) > MAX_REWARD_MAGNITUDE)
    return `must be within ±1e15 (got ${String(value)}); scale the reward down, e.g. to [0, 1]`;
  return null;
}

/** Throws a 422 `ValidationError` naming `field` when `value` is not a reward within ±1e15. */
export function checkReward(value: number, field: string): void {
  const problem = rewardProblem(value);
  if (problem)
    throw new ValidationError(`Invalid ${field}: ${problem}.`, [{ path: field, message: problem }], { status: 422 });
}

/** Earliest time a store server accepts: 2000-01-01T00:00:00Z, in seconds since the epoch. */
export const MIN_TIME_SECONDS = 946_684_800;
/** Latest time a store server accepts: 2200-01-01T00:00:00Z, in seconds since the epoch. */
export const MAX_TIME_SECONDS = 7_258_118_400;

/**
 * What is wrong with `value` as a time (seconds since the epoch), or `null` when it is fine (a finite number from
 * 2000-01-01 to 2200-01-01). Times outside that range are units mixed up (milliseconds, nanoseconds) or made up.
 */
export function timeProblem(value: number): string | null {
  const range = `2000-01-01 … 2200-01-01 (${MIN_TIME_SECONDS} … ${MAX_TIME_SECONDS} seconds since the epoch)`;
  if (!Number.isFinite(value) || value < MIN_TIME_SECONDS || value > MAX_TIME_SECONDS)
    return `must be a time within ${range} (got ${String(value)}); send seconds since the epoch, e.g. Date.now() / 1000, not milliseconds or nanoseconds`;
  return null;
}
