import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { toWire, type SpanInput } from '@agl/core/schema';
import type { ProductionRecord } from '@agl/core/store';
import { countTransactions } from '../__fixtures__/count-transactions';
import { tempFileEachTest } from '../__fixtures__/temp-file';
import { testSpan } from '../__fixtures__/test-records';
import { createStoreServer, type StoreServer } from '../server/index';
import { SqliteStore } from '../sqlite/sqlite-store';

const file = tempFileEachTest('agl-records-rule-', 'store.sqlite');
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** A recorder's batch of `n` requests: every start, then every request's spans, then every end. */
function batch(
  n: number,
  tag: string,
  spanOverrides: (i: number) => Partial<SpanInput> = () => ({}),
): ProductionRecord[] {
  const ids = Array.from({ length: n }, (_, i) => ({ rolloutId: `ro-${tag}-${i}`, attemptId: `at-${tag}-${i}` }));
  return [
    ...ids.map((id, i) => ({
      kind: 'start' as const,
      ...id,
      input: { i },
      metadata: { source: 'production' },
      startTime: 1_700_000_100 + i,
    })),
    ...ids.map((id, i) => ({
      kind: 'spans' as const,
      spans: [
        testSpan(id.rolloutId, id.attemptId, {
          spanId: `sp-${i}`,
          sequenceId: 1,
          startTime: 1_700_000_101 + i,
          endTime: 1_700_000_102 + i,
          ...spanOverrides(i),
        }),
      ],
    })),
    ...ids.map((id, i) => ({ kind: 'end' as const, ...id, status: 'succeeded' as const, endTime: 1_700_000_200 + i })),
  ];
}

describe('applyProductionRecords (a recorder batch in one transaction)', () => {
  it('applies a batch of many requests in one SQLite transaction, each rollout running then succeeded', async () => {
    const store = new SqliteStore({ path: file.path });
    closers.push(() => store.close());
    const records = batch(20, 'one');
    await store.queryRollouts({}); // the first watched call runs the watchdog scan (a transaction of its own)
    const commits = countTransactions(store);
    expect(await store.applyProductionRecords(records)).toEqual({ applied: 60, rejected: [] });
    expect(commits()).toBe(1);
    const rollouts = await store.queryRollouts({ limit: 100 });
    expect(rollouts.total).toBe(20);
    for (const r of rollouts.items) {
      const i = Number(r.rolloutId.split('-').at(-1));
      expect(r).toMatchObject({
        status: 'succeeded',
        startTime: 1_700_000_100 + i,
        endTime: 1_700_000_200 + i,
        input: { i },
        mode: null,
      });
      const attempts = await store.queryAttempts({ rolloutId: r.rolloutId });
      expect(attempts.items).toMatchObject([{ attemptId: `at-one-${i}`, sequenceId: 1, status: 'succeeded' }]);
      expect((await store.querySpans({ rolloutId: r.rolloutId })).total).toBe(1);
    }
    // The batch again (its answer lost): one more transaction, nothing duplicated.
    expect(await store.applyProductionRecords(records)).toEqual({ applied: 60, rejected: [] });
    expect((await store.queryRollouts({})).total).toBe(20);
    expect((await store.querySpans({ rolloutId: 'ro-one-3' })).total).toBe(1);
  });

  it('a start replayed for a rollout already there with another attempt is refused by index, the rest applied', async () => {
    const store = new SqliteStore({ path: file.path });
    closers.push(() => store.close());
    await store.startRollout({ input: 1, rolloutId: 'ro-two-1', attemptId: 'at-other' });
    const result = await store.applyProductionRecords(batch(3, 'two'));
    expect(result.rejected.map((r) => [r.index, r.errorType])).toEqual([
      [1, 'AGL_ConflictError'],
      [4, 'AGL_NotFoundError'],
      [7, 'AGL_NotFoundError'],
    ]);
    expect(result.applied).toBe(6);
    expect((await store.getRolloutById('ro-two-0'))?.status).toBe('succeeded');
    expect((await store.getRolloutById('ro-two-2'))?.status).toBe('succeeded');
  });
});

describe('applyProductionRecords while another connection holds the write lock', () => {
  it('waits from the event loop (other work goes on) and commits once the lock is free', async () => {
    const store = new SqliteStore({ path: file.path, busyTimeoutMs: 10_000 });
    closers.push(() => store.close());
    await store.queryRollouts({}); // the watchdog's first scan, out of the way
    const other = new Database(file.path);
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const applying = store.applyProductionRecords(batch(2, 'lock')).finally(() => (settled = true));
    // This thread's event loop goes on meanwhile: the batch does not block it in SQLite's busy handler (in its first
    // 100 ms, after which it would; blocked here, with the lock held by this thread, it would fail after 10 s).
    for (let i = 0; i < 3; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    other.exec('COMMIT');
    other.close();
    expect(await applying).toEqual({ applied: 6, rejected: [] });
    expect((await store.getRolloutById('ro-lock-1'))?.status).toBe('succeeded');
  });
});

describe('POST /v1/agl/records over SQLite', () => {
  let server: StoreServer;
  async function post(records: ProductionRecord[]): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.url}/v1/agl/records`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ records: records.map((r) => toWire('productionRecord', r)) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('refuses only the record whose reward is out of bounds (by index) and applies the rest', async () => {
    const store = new SqliteStore({ path: file.path });
    server = await createStoreServer({ store, port: 0, closeStore: true });
    closers.push(() => server.close());
    const reward = (i: number): Partial<SpanInput> =>
      i === 1
        ? { name: 'agentlightning.annotation', attributes: { 'agentlightning.reward.0.value': 1e300 } }
        : { attributes: { 'gen_ai.system': 'openai' } };
    const answer = await post(batch(3, 'rw', reward));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      applied: 8,
      rejected: [{ index: 4, kind: 'spans', error_type: 'AGL_ValidationError' }],
    });
    expect(String((answer.body.rejected as Array<{ detail: string }>)[0]!.detail)).toMatch(/reward.*±1e15/u);
    expect((await store.querySpans({ rolloutId: 'ro-rw-1' })).total).toBe(0);
    expect((await store.querySpans({ rolloutId: 'ro-rw-0' })).items[0]?.attributes).toEqual({
      'gen_ai.system': 'openai',
    });
    expect((await store.getRolloutById('ro-rw-1'))?.status).toBe('succeeded');
  });
});
