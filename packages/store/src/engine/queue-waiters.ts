/**
 * Waits for "rollouts may be queued now" signals (`LightningStore.waitForQueue`): the store calls
 * {@link QueueWaiters.wakeAll} after a commit that enqueued something (or when another process or server did), so idle
 * runner workers sleep instead of polling `dequeue`.
 */
export class QueueWaiters {
  readonly #waiters = new Set<(woken: boolean) => void>();
  #generation = 0;

  /** Bumped by every {@link QueueWaiters.wakeAll}: read it before checking the queue, pass it to `wait`. */
  get generation(): number {
    return this.#generation;
  }

  /** Number of waits in progress. */
  get size(): number {
    return this.#waiters.size;
  }

  /** Resolves every wait in progress with `true`. */
  wakeAll(): void {
    this.#generation += 1;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const done of waiters) done(true);
  }

  /**
   * Resolves `true` when woken, `false` after `timeoutMs` or when `signal` aborts. With `since` (a
   * {@link QueueWaiters.generation} read before the caller checked the queue), a wake-up that came while the caller was
   * checking resolves `true` at once instead of being lost.
   */
  wait(timeoutMs: number, signal?: AbortSignal, since?: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      if (since !== undefined && since !== this.#generation) return resolve(true);
      if (signal?.aborted) return resolve(false);
      const done = (woken: boolean): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#waiters.delete(done);
        resolve(woken);
      };
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(false), Math.min(Math.max(0, timeoutMs), 2_147_483_647));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(done);
    });
  }
}
