import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from './concurrency-limit';

describe('ConcurrencyLimit', () => {
  it('lets `limit` holders in at once and hands each freed slot to the oldest waiter', async () => {
    const limit = new ConcurrencyLimit(2);
    const order: number[] = [];
    let active = 0;
    let peak = 0;
    const gates = Array.from({ length: 5 }, () => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    });
    const holders = gates.map(async (gate, i) => {
      await limit.acquire();
      order.push(i);
      active += 1;
      peak = Math.max(peak, active);
      await gate.promise;
      active -= 1;
      limit.release();
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([0, 1]);
    gates[1]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([0, 1, 2]);
    for (const gate of gates) gate.resolve();
    await Promise.all(holders);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    // Every slot is free again: two acquire at once without waiting.
    let both = false;
    void Promise.all([limit.acquire(), limit.acquire()]).then(() => (both = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(both).toBe(true);
  });
});
