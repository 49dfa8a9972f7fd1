import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../errors/index';
import type { SpanInput } from '../schema/index';
import { applyRecords } from './apply-records';
import type { LightningStore } from './lightning-store';

/**
 * The store calls `applyRecords` makes, answered after a turn of the event loop (as SQLite's batched writes are), with
 * the calls in flight at once recorded. The behaviours on real backends are in the store conformance suite.
 */
function slowStore() {
  const calls: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const call = async <T>(name: string, value: T): Promise<T> => {
    calls.push(name);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight -= 1;
    return value;
  };
  const store = {
    startRollout: (r: { rolloutId: string }) => call(`start ${r.rolloutId}`, { attempt: { status: 'running' } }),
    addSpans: (spans: SpanInput[]) => call(`spans ${spans.map((s) => s.rolloutId).join('+')}`, []),
    updateAttempt: (rolloutId: string) => {
      if (rolloutId === 'ro-gone')
        return Promise.reject(new NotFoundError('rollout', 'ro-gone', 'Rollout ro-gone not found'));
      return call(`end ${rolloutId}`, {});
    },
  } as unknown as LightningStore;
  return { store, calls, maxInFlight: () => maxInFlight };
}

const span = (rolloutId: string) => ({
  rolloutId,
  attemptId: `at-${rolloutId}`,
  sequenceId: 1,
  spanId: 's',
  name: 'x',
});

describe('applyRecords', () => {
  it("applies different rollouts side by side and each rollout's records in order", async () => {
    const { store, calls, maxInFlight } = slowStore();
    const ids = Array.from({ length: 20 }, (_, i) => `ro-${i}`);
    const records = [
      ...ids.map((id) => ({ kind: 'start', rolloutId: id, attemptId: `at-${id}`, input: null, startTime: 1 })),
      ...ids.flatMap((id) => [
        { kind: 'spans', spans: [span(id)] },
        { kind: 'end', rolloutId: id, attemptId: `at-${id}`, status: 'succeeded', endTime: 2 },
      ]),
    ];
    expect(await applyRecords(store, records)).toEqual({ applied: 60, rejected: [] });
    // All 20 starts are with the store at once (one SQLite commit), not one after another.
    expect(maxInFlight()).toBe(20);
    for (const id of ids) {
      const mine = calls.filter((c) => c.endsWith(` ${id}`));
      expect(mine).toEqual([`start ${id}`, `spans ${id}`, `end ${id}`]);
    }
  });

  it('a record touching two rollouts waits for both; refusals come back in index order', async () => {
    const { store, calls } = slowStore();
    const result = await applyRecords(store, [
      { kind: 'start', rolloutId: 'ro-a', attemptId: 'at-ro-a', input: null, startTime: 1 },
      { kind: 'end', rolloutId: 'ro-gone', attemptId: 'at-x', status: 'failed', endTime: 2 },
      { kind: 'start', rolloutId: 'ro-b', attemptId: 'at-ro-b', input: null, startTime: 1 },
      { kind: 'nonsense' },
      { kind: 'spans', spans: [span('ro-a'), span('ro-b')] },
      { kind: 'end', rolloutId: 'ro-a', attemptId: 'at-ro-a', status: 'succeeded', endTime: 2 },
    ]);
    expect(result.applied).toBe(4);
    expect(result.rejected.map((r) => [r.index, r.errorType])).toEqual([
      [1, 'AGL_NotFoundError'],
      [3, 'AGL_ValidationError'],
    ]);
    const at = (name: string) => calls.indexOf(name);
    expect(at('spans ro-a+ro-b')).toBeGreaterThan(at('start ro-a'));
    expect(at('spans ro-a+ro-b')).toBeGreaterThan(at('start ro-b'));
    expect(at('end ro-a')).toBeGreaterThan(at('spans ro-a+ro-b'));
  });

  it('throws a store fault (not an AglError) once every record has settled', async () => {
    const { store, calls } = slowStore();
    const failing = {
      ...store,
      startRollout: (r: { rolloutId: string }) =>
        r.rolloutId === 'ro-bad' ? Promise.reject(new Error('disk I/O error')) : store.startRollout(r as never),
    } as unknown as LightningStore;
    await expect(
      applyRecords(failing, [
        { kind: 'start', rolloutId: 'ro-bad', attemptId: 'at', input: null, startTime: 1 },
        { kind: 'start', rolloutId: 'ro-ok', attemptId: 'at', input: null, startTime: 1 },
      ]),
    ).rejects.toThrow('disk I/O error');
    expect(calls).toEqual(['start ro-ok']);
  });
});
