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
