/** Default most one-call rollouts per second per process for LLM calls outside any rollout. */
export const DEFAULT_UNSCOPED_PER_SECOND = 50;

/** A per-minute rollout of LLM calls outside any rollout that were over the rate bound (only counted). */
export interface FoldedMinute {
  /** Start of the minute, epoch ms. */
  startMs: number;
  /** Calls folded in. */
  calls: number;
}

/**
 * The rate bound of unscoped LLM calls (issue 55): at most `perSecond` become one-call rollouts in each second; the
 * rest are counted, and each minute's count is handed to `emit` once the minute is over (at the next call after it, on
 * the timer, or on {@link UnscopedLimiter.drain}), to be recorded as one rollout. The clock is injectable.
 */
export class UnscopedLimiter {
  readonly #perSecond: number;
  readonly #now: () => number;
  readonly #emit: (minute: FoldedMinute) => void;
  #second = -1;
  #inSecond = 0;
  #pending: FoldedMinute | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Calls folded so far (`observeStats().unscopedFolded`). */
  folded = 0;

  constructor(options: { perSecond: number; emit: (minute: FoldedMinute) => void; now?: () => number }) {
    if (!(options.perSecond >= 0) || !Number.isFinite(options.perSecond))
      throw new RangeError(
        `unscopedPerSecond must be a number ≥ 0 (got ${options.perSecond}); 0 folds every unscoped call.`,
      );
    this.#perSecond = options.perSecond;
    this.#emit = options.emit;
    this.#now = options.now ?? Date.now;
  }

  /** True when this call gets its own rollout; false when it was counted into the current minute. */
  take(): boolean {
    const now = this.#now();
    this.#emitDue(now);
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#inSecond = 0;
    }
    if (this.#inSecond < this.#perSecond) {
      this.#inSecond += 1;
      return true;
    }
    this.folded += 1;
    const minute = Math.floor(now / 60_000) * 60_000;
    if (this.#pending === null) {
      this.#pending = { startMs: minute, calls: 0 };
      this.#timer = setTimeout(() => this.#emitDue(this.#now()), minute + 60_000 - now + 50);
      this.#timer.unref?.();
    }
    this.#pending.calls += 1;
    return false;
  }

  /** Hands over the current minute's count now, whether or not the minute is over (process exit). */
  drain(): void {
    this.#emitDue(Number.POSITIVE_INFINITY);
  }

  #emitDue(now: number): void {
    const pending = this.#pending;
    if (pending === null || now < pending.startMs + 60_000) return;
    this.#pending = null;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#emit(pending);
  }
}
