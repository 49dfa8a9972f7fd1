import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { TERMINAL_STATUSES } from '@agl/core/schema';
import { FakeClock } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { testRollout, testSpan } from '../__fixtures__/test-records';
import { MemoryStore } from '../index';
import { MemoryStorage } from '../memory/memory-storage';
import { SqliteStorage } from '../sqlite/sqlite-storage';
import { SqliteStore } from '../sqlite/sqlite-store';
import { migrate } from '../sqlite/migrations';
import { prepareSpans } from './rule-store';
import { call } from './storage-ops';
import { addSpansRule, enqueueRolloutsRule, startRolloutRule, updateRolloutRule } from './store-rules';
import { SyncRuleRunner } from './sync-rule-runner';
import type { WRITE_LOCK_BUSY } from './storage';

/** A migrated SQLite storage in a new temporary directory (the caller removes `dir`). */
function tempSqliteStorage(prefix: string): { dir: string; storage: SqliteStorage } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = new Database(join(dir, 'store.sqlite'));
  migrate(db, 'store.sqlite');
  return { dir, storage: new SqliteStorage(db) };
}

describe('EngineStore', () => {
  it('a wait in progress rejects with StoreClosedError when the store closes', async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    const r = await store.startRollout({ input: 1 });
    const waiting = store.waitForRollouts([r.rolloutId], { timeoutSeconds: 30 });
    await store.close();
    await expect(waiting).rejects.toMatchObject({ name: 'AGL_StoreClosedError' });
  });

  it('a wait without a timeout resolves on the event, without polling', async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    const r = await store.startRollout({ input: 1 });
    let settled = false;
    const waiting = store.waitForRollouts([r.rolloutId]).then((v) => ((settled = true), v));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    await store.updateRollout(r.rolloutId, { status: 'cancelled' });
    expect((await waiting).map((x) => x.status)).toEqual(['cancelled']);
    await store.close();
  });

  it('the default watchdog debounce is 10 seconds', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const r = await store.startRollout({ input: 1, config: { timeoutSeconds: 1 } });
    clock.advance(9);
    expect((await store.getLatestAttempt(r.rolloutId))?.status).toBe('preparing');
    clock.advance(1);
    expect((await store.getLatestAttempt(r.rolloutId))?.status).toBe('timeout');
    await store.close();
  });
});

describe('unfinishedRolloutIds', () => {
  const statuses = ['queuing', 'running', 'succeeded', 'failed', 'cancelled', 'requeuing'] as const;
  const rollout = (status: (typeof statuses)[number]) => ({
    rolloutId: `ro-${status}`,
    input: null,
    startTime: 1,
    endTime: null,
    mode: null,
    resourcesId: null,
    status,
    config: { timeoutSeconds: null, unresponsiveSeconds: null, maxAttempts: 1, retryCondition: [] },
    metadata: {},
  });
  const { dir, storage: sqlite } = tempSqliteStorage('agl-statuses-');
  const storages = { memory: new MemoryStorage(), sqlite };

  it.each(Object.entries(storages))(
    '%s: the unfinished ids, and the finished rollouts by status filter',
    (_name, storage) => {
      storage.transaction(() => storage.insertRollouts(statuses.map(rollout)));
      const ids = ['ro-unknown', ...statuses.map((s) => `ro-${s}`), 'ro-succeeded'];
      const unfinished = [...storage.read(() => storage.unfinishedRolloutIds(ids))].sort();
      const finished = storage
        .read(() => storage.listRollouts({ ids, statuses: TERMINAL_STATUSES }))
        .map((r) => [r.rolloutId, r.status]);
      // Every known id is in exactly one of the two; the unknown one in neither.
      expect([...unfinished, ...finished.map(([id]) => id!)].sort()).toEqual(statuses.map((s) => `ro-${s}`).sort());
      expect(finished.sort()).toEqual([
        ['ro-cancelled', 'cancelled'],
        ['ro-failed', 'failed'],
        ['ro-succeeded', 'succeeded'],
      ]);
      expect(unfinished).toEqual(['ro-queuing', 'ro-requeuing', 'ro-running']);
      expect(storage.read(() => storage.unfinishedRolloutIds([])).size).toBe(0);
    },
  );

  it('waitForRollouts with a timeout waits while any id is unfinished, then returns the finished ones in input order', async () => {
    const store = new SqliteStore({ path: join(dir, 'wait.sqlite') });
    const a = await store.startRollout({ input: 'a' });
    const b = await store.startRollout({ input: 'b' });
    await store.updateRollout(b.rolloutId, { status: 'failed' });
    expect(
      (await store.waitForRollouts([a.rolloutId, b.rolloutId, 'ro-none', b.rolloutId], { timeoutSeconds: 0 })).map(
        (r) => r.rolloutId,
      ),
    ).toEqual([b.rolloutId, b.rolloutId]);
    const waiting = store.waitForRollouts([a.rolloutId, 'ro-none', b.rolloutId], { timeoutSeconds: 30 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.updateRollout(a.rolloutId, { status: 'succeeded' });
    expect((await waiting).map((r) => [r.rolloutId, r.status])).toEqual([
      [a.rolloutId, 'succeeded'],
      [b.rolloutId, 'failed'],
    ]);
    await store.close();
  });
});

describe('SqliteStorage transactions', () => {
  it('roll back every write when the callback throws', () => {
    const { dir, storage: s } = tempSqliteStorage('agl-sqlite-tx-');
    const rollout = testRollout('ro-a');
    expect(() =>
      s.transaction(() => {
        s.insertRollouts([rollout]);
        s.enqueue(['ro-a']);
        s.incrementSequence('ro-a', 2);
        s.putResources({ resourcesId: 'r', createTime: 1, updateTime: 1, version: 1, resources: {} });
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.countRollouts()).toBe(0);
    expect(s.transaction(() => s.dequeue())).toBeNull();
    expect(s.getLatestResourcesId()).toBeNull();
    expect(s.transaction(() => s.incrementSequence('ro-a', 1))).toBe(1);
    s.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

/** A SqliteStore whose storage counts the transactions it opens. */
function countingSqliteStore(dir: string, clock = new FakeClock()): { store: SqliteStore; transactions: () => number } {
  const store = new SqliteStore({ path: join(dir, 'batch.sqlite'), clock });
  const storage = (store as unknown as { runner: SyncRuleRunner }).runner.storage;
  let count = 0;
  const transaction = storage.transaction.bind(storage);
  storage.transaction = <T>(fn: () => T): T => {
    count += 1;
    return transaction(fn);
  };
  const tryTransaction = storage.tryTransaction!.bind(storage);
  storage.tryTransaction = <T>(fn: () => T): T | typeof WRITE_LOCK_BUSY => {
    count += 1;
    return tryTransaction(fn);
  };
  return { store, transactions: () => count };
}

describe('SqliteStore write batching', () => {
  it('commits the writes of one event-loop turn together, each rollout handed out once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-batch-'));
    const { store, transactions } = countingSqliteStore(dir);
    await store.enqueueRollouts(Array.from({ length: 40 }, (_, i) => ({ input: i })));
    const before = transactions();
    const claimed = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.dequeueRollout({ workerId: `w-${i}` })),
    );
    expect(transactions() - before).toBe(1);
    const ids = claimed.filter((r) => r !== null).map((r) => r!.rolloutId);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    expect(claimed.slice(40)).toEqual(Array(10).fill(null));
    // Each claim is its worker's: the attempt carries the worker id, and the worker is busy with it.
    for (const [i, r] of claimed.slice(0, 40).entries()) expect(r!.attempt.workerId).toBe(`w-${i}`);
    expect((await store.getWorkerById('w-3'))?.currentRolloutId).toBe(claimed[3]!.rolloutId);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores span attribute maps as they were when addSpans was called, whatever the caller changes before the commit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-batch-'));
    const { store } = countingSqliteStore(dir);
    const r = await store.startRollout({ input: 1 });
    const attributes: Record<string, unknown> = { k: 'v', list: [1, 2] };
    const adding = store.addSpans([testSpan(r.rolloutId, r.attempt.attemptId, { attributes: attributes as never })]);
    attributes.k = 'changed';
    attributes.bad = { nested: true }; // not a valid attribute value: must never reach the store
    await adding;
    expect((await store.querySpans({ rolloutId: r.rolloutId })).items.map((x) => x.attributes)).toEqual([
      { k: 'v', list: [1, 2] },
    ]);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls that fail in a batch reject alone; the others land and are announced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-batch-'));
    const { store } = countingSqliteStore(dir);
    const [a, b] = await store.enqueueRollouts([{ input: 'a' }, { input: 'b' }]);
    const ra = (await store.dequeueRollout({ workerId: 'w' }))!;
    const waiting = store.waitForRollouts([a!.rolloutId], { timeoutSeconds: 5 });
    const results = await Promise.allSettled([
      store.updateAttempt(ra.rolloutId, ra.attempt.attemptId, { status: 'succeeded' }),
      store.updateRollout(b!.rolloutId, { status: 'bogus' as 'failed', metadata: { touched: true } }),
      store.updateAttempt('ro-missing', 'at-x', { status: 'failed' }),
      store.addSpans([testSpan(ra.rolloutId, ra.attempt.attemptId)]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ name: 'AGL_NotFoundError' });
    expect((await waiting).map((r) => r.status)).toEqual(['succeeded']);
    const untouched = await store.getRolloutById(b!.rolloutId);
    expect(untouched).toMatchObject({ status: 'queuing', metadata: {} });
    expect((await store.querySpans({ rolloutId: ra.rolloutId })).items.map((s) => s.spanId)).toEqual(['s1']);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('close() commits the writes still queued, so an acknowledged write is never lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-batch-'));
    const store = new SqliteStore({ path: join(dir, 'close.sqlite') });
    const written = store.updateWorker('w-late', { heartbeatStats: { n: 1 } });
    await store.close();
    await expect(written).resolves.toMatchObject({ workerId: 'w-late' });
    const reopened = new SqliteStore({ path: join(dir, 'close.sqlite') });
    expect((await reopened.getWorkerById('w-late'))?.heartbeatStats).toEqual({ n: 1 });
    await reopened.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('SyncRuleRunner.runBatch', () => {
  it('rolls back only the failing job, and fails every job when the commit fails', () => {
    const { dir, storage } = tempSqliteStorage('agl-runbatch-');
    const changed: string[] = [];
    const runner = new SyncRuleRunner({
      storage,
      clock: new FakeClock(),
      onRolloutsChanged: (rs) => changed.push(...rs.map((r) => r.status)),
    });
    const [r] = runner.write((t) => enqueueRolloutsRule(t, [{ input: 1 }]));
    changed.length = 0;
    const results = runner.runBatch([
      (t) => updateRolloutRule(t, r!.rolloutId, { status: 'cancelled' }),
      function* (t) {
        yield* updateRolloutRule(t, r!.rolloutId, { status: 'failed' });
        yield* enqueueRolloutsRule(t, [{ input: 2 }]);
        throw new Error('boom');
      },
    ]);
    expect(results!.map((x) => x.ok)).toEqual([true, false]);
    expect(storage.countRollouts()).toBe(1);
    expect(changed).toEqual(['cancelled']);
    // A failing commit (here: the storage refuses to begin) fails every job and announces nothing.
    const transaction = storage.transaction.bind(storage);
    storage.transaction = () => {
      throw new Error('disk full');
    };
    const failed = runner.runBatch([
      (t) => enqueueRolloutsRule(t, [{ input: 3 }]),
      (t) => enqueueRolloutsRule(t, [{ input: 4 }]),
    ]);
    expect(failed).toEqual([
      { ok: false, error: new Error('disk full') },
      { ok: false, error: new Error('disk full') },
    ]);
    storage.transaction = transaction;
    expect(storage.countRollouts()).toBe(1);
    expect(changed).toEqual(['cancelled']);
    storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('prepareSpans', () => {
  it('checks and serialises spans without touching the storage, so the write transaction only inserts them', () => {
    const { dir, storage } = tempSqliteStorage('agl-prepare-');
    const calls: string[] = [];
    const watched = new Proxy(storage, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(key));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const runner = new SyncRuleRunner({ storage: watched, clock: new FakeClock() });
    const r = runner.write((t) => startRolloutRule(t, { input: 1, metadata: {} }));
    const attributes = { k: 'v' };
    const span = testSpan(r.rolloutId, r.attempt.attemptId, { attributes });
    calls.length = 0;
    const serialize = watched.serializeSpans.bind(watched);
    const prepared = prepareSpans([span, { ...span, spanId: 's2' }], serialize, [null, '{"k":"text"}']);
    expect(calls).toEqual(['serializeSpans']);
    expect(prepared.serialized?.attributes).toEqual(['{"k":"v"}', '{"k":"text"}']);
    expect(() => prepareSpans([{ ...span, sequenceId: -1 }], serialize)).toThrow(/sequenceId/);
    // The checked map is the caller's own object (it is only serialised); what is stored does not change with it.
    expect(prepared.spans[0]!.attributes).toBe(span.attributes);
    expect(runner.write((t) => addSpansRule(t, prepared)).map((s) => s.spanId)).toEqual(['s1', 's2']);
    attributes.k = 'changed later';
    expect(calls).toContain('insertSerializedSpans');
    expect(runner.read(call('listSpans', r.rolloutId, null)).map((s) => s.attributes)).toEqual([
      { k: 'v' },
      { k: 'text' },
    ]);
    attributes.k = 'v';
    storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
