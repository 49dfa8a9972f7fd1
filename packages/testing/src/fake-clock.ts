import type { Clock } from '@agl/core/store';

/**
 * A controllable {@link Clock} for tests: time only moves when the test calls {@link FakeClock.advance} or
 * {@link FakeClock.set}. Seconds since the epoch, like `systemClock`.
 */
export class FakeClock implements Clock {
  #now: number;

  /** Starts at `start` seconds (default 1,700,000,000: a realistic epoch value). */
  constructor(start = 1_700_000_000) {
    this.#now = start;
  }

  /** The current fake time in seconds. */
  now(): number {
    return this.#now;
  }

  /** Moves time forward by `seconds` (must be ≥ 0) and returns the new time. */
  advance(seconds: number): number {
    if (!(seconds >= 0)) throw new RangeError(`FakeClock.advance needs seconds >= 0, got ${seconds}`);
    this.#now += seconds;
    return this.#now;
  }

  /** Jumps to an absolute time (seconds since the epoch). */
  set(seconds: number): void {
    this.#now = seconds;
  }
}
