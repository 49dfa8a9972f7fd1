import type { LightningStore } from '@agl/core';

/**
 * The idle workers of one runner, waiting for work together. One `waitForQueue` call at a time serves all of them:
 * when the store says work is queued, every waiting worker goes to dequeue; when the wait times out (ten poll
 * intervals, 5 s at most), only one of them does (that dequeue also runs the store's watchdog) and the others wait
 * again, so N idle workers cost one empty dequeue per wait instead of N. Without `waitForQueue`, or when the store
 * cannot wait (an AGL 0.3 server), each worker sleeps one poll interval, as polling runners do.
 */
export class IdleGate {
  readonly #store: LightningStore;
  readonly #pollMs: number;
  readonly #signal: AbortSignal;
  #round: { queued: Promise<boolean | null>; leaderTaken: boolean } | null = null;

  /** `signal` stops the runner (one gate per runner: its workers share the signal). */
  constructor(store: LightningStore, pollIntervalSeconds: number, signal: AbortSignal) {
    this.#store = store;
    this.#pollMs = pollIntervalSeconds * 1000;
    this.#signal = signal;
  }

  /** Whether the store can tell when work is queued (otherwise the gate polls). */
  get signals(): boolean {
    return this.#store.waitForQueue !== undefined;
  }

  /** Resolves when this worker should try a dequeue (or the runner stops). */
  async wait(): Promise<void> {
    const waitForQueue = this.#store.waitForQueue?.bind(this.#store);
    if (!waitForQueue) return sleep(this.#pollMs, this.#signal);
    while (!this.#signal.aborted) {
      if (!this.#round) {
        const timeoutMs = Math.max(this.#pollMs, Math.min(5000, this.#pollMs * 10));
        const queued = waitForQueue({ timeoutMs, signal: this.#signal }).then(
          (q) => q,
          () => null,
        );
        this.#round = { queued, leaderTaken: false };
      }
      const round = this.#round;
      const queued = await round.queued;
      if (this.#round === round) this.#round = null;
      if (queued === null) return sleep(this.#pollMs, this.#signal);
      if (queued || !round.leaderTaken) {
        round.leaderTaken = true;
        return;
      }
    }
  }
}

/** Sleep that ends early when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
