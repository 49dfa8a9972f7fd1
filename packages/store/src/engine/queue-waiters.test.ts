import { describe, expect, it } from 'vitest';
import { QueueWaiters } from './queue-waiters';

describe('QueueWaiters', () => {
  it('a wake-up between reading the generation and waiting resolves the wait at once (no lost wake-up)', async () => {
    const waiters = new QueueWaiters();
    const since = waiters.generation;
    waiters.wakeAll(); // e.g. a NOTIFY heard while the caller was still reading the queue
    const started = Date.now();
    await expect(waiters.wait(60_000, undefined, since)).resolves.toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(waiters.size).toBe(0);
  });

  it('without a wake-up since, the wait sleeps until woken or timed out', async () => {
    const waiters = new QueueWaiters();
    const since = waiters.generation;
    const woken = waiters.wait(60_000, undefined, since);
    expect(waiters.size).toBe(1);
    waiters.wakeAll();
    await expect(woken).resolves.toBe(true);
    await expect(waiters.wait(1, undefined, waiters.generation)).resolves.toBe(false);
  });
});
