/**
 * At most `limit` holders at a time; the others wait in arrival order, and a slot freed while someone waits goes
 * straight to the oldest waiter.
 *
 * @example
 * const limit = new ConcurrencyLimit(4);
 * await limit.acquire();
 * try { await callTheModel(); } finally { limit.release(); }
 */
export class ConcurrencyLimit {
  /** Most holders at once. */
  readonly limit: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Resolves once the caller holds a slot; every `acquire()` is paired with one `release()`. */
  async acquire(): Promise<void> {
    if (this.#active < this.limit) {
      this.#active += 1;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Hands the slot to the oldest waiter, or frees it. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active -= 1;
  }
}
