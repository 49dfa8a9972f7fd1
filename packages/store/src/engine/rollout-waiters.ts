import { isTerminalStatus, type Rollout } from '@agl/core/schema';

interface Waiter {
  pending: Set<string>;
  wake: () => void;
}

/**
 * Event-driven waits for rollouts to finish: the store calls {@link RolloutWaiters.notify} after each commit that
 * changed rollout statuses, and each waiter re-checks only when one of its ids moved to a terminal status. No polling.
 */
export class RolloutWaiters {
  readonly #waiters = new Set<Waiter>();

  /** Number of waits in progress. */
  get size(): number {
    return this.#waiters.size;
  }

  /** Wakes the waiters whose ids include a rollout that is now terminal. */
  notify(rollouts: readonly Rollout[]): void {
    if (this.#waiters.size === 0) return;
    for (const rollout of rollouts) {
      if (!isTerminalStatus(rollout.status)) continue;
      for (const waiter of this.#waiters) {
        if (waiter.pending.delete(rollout.rolloutId) && waiter.pending.size === 0) waiter.wake();
      }
    }
  }

  /** Wakes every waiter (close, or a poll tick in multi-process mode). */
  wakeAll(): void {
    for (const waiter of this.#waiters) waiter.wake();
  }

  /**
   * Resolves when every id in `pending` is terminal, `timeoutMs` passes (`null` = never), `wakeAll` is called, or
   * `pollMs` passes (used when other processes may finish rollouts; `null` = no polling).
   */
  wait(pending: Set<string>, timeoutMs: number | null, pollMs: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      const timers: ReturnType<typeof setTimeout>[] = [];
      const waiter: Waiter = {
        pending,
        wake: () => {
          for (const t of timers) clearTimeout(t);
          this.#waiters.delete(waiter);
          resolve();
        },
      };
      this.#waiters.add(waiter);
      // setTimeout fires at once past 2^31-1 ms; a longer wait simply re-arms after that long.
      if (timeoutMs !== null) timers.push(setTimeout(waiter.wake, Math.min(Math.max(0, timeoutMs), 2_147_483_647)));
      if (pollMs !== null) timers.push(setTimeout(waiter.wake, pollMs));
    });
  }
}
