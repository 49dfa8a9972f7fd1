/** The pause/drain state, as `GET /proxy/state` reports it (snake_case on the wire). */
export interface PauseState {
  /** True while new LLM calls are refused with 429. */
  paused: boolean;
  /** Seconds clients are told to wait (`Retry-After`). */
  retryAfterSeconds: number;
  /** Why the gateway is paused, if given. */
  reason: string | null;
  /** LLM calls accepted and not yet finished. */
  inflight: number;
}

/**
 * Pause/drain for weight updates (AGL 1.0 routes 13 to 15): while paused, new calls are refused; calls already in
 * flight run to completion, and {@link PauseController.drained} resolves when none are left.
 */
export class PauseController {
  #paused = false;
  #retryAfterSeconds = 5;
  #reason: string | null = null;
  #inflight = 0;
  #waiters: (() => void)[] = [];

  /** Refuses new calls from now on. */
  pause(options: { retryAfterSeconds?: number; reason?: string | null } = {}): PauseState {
    this.#paused = true;
    if (options.retryAfterSeconds !== undefined) this.#retryAfterSeconds = options.retryAfterSeconds;
    this.#reason = options.reason ?? null;
    return this.state();
  }

  /** Accepts calls again. */
  resume(): PauseState {
    this.#paused = false;
    this.#reason = null;
    return this.state();
  }

  /** The current state. */
  state(): PauseState {
    return {
      paused: this.#paused,
      retryAfterSeconds: this.#retryAfterSeconds,
      reason: this.#reason,
      inflight: this.#inflight,
    };
  }

  /** LLM calls accepted and not yet finished. */
  get inflight(): number {
    return this.#inflight;
  }

  /** Counts a call in; `false` (and nothing counted) when paused. */
  tryEnter(): boolean {
    if (this.#paused) return false;
    this.#inflight += 1;
    return true;
  }

  /** Counts a call out. */
  leave(): void {
    this.#inflight = Math.max(0, this.#inflight - 1);
    if (this.#inflight === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves when no call is in flight. */
  drained(): Promise<void> {
    if (this.#inflight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}

/** The wire form of {@link PauseState}. */
export function pauseStateToWire(state: PauseState): Record<string, unknown> {
  return {
    paused: state.paused,
    retry_after_seconds: state.retryAfterSeconds,
    reason: state.reason,
    inflight: state.inflight,
  };
}
