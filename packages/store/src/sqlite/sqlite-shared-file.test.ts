import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@agl/testing';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WRITE_LOCK_BUSY } from '../engine/storage';
import { SqliteStorage } from './sqlite-storage';
import { SqliteStore } from './index';

describe('two SqliteStore connections on one file', () => {
  let dir: string;
  let a: SqliteStore;
  let b: SqliteStore;
  let clock: FakeClock;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agl-sqlite-shared-'));
    clock = new FakeClock();
    const path = join(dir, 'shared.sqlite');
    a = new SqliteStore({ path, clock, scanDebounceSeconds: 0 });
    b = new SqliteStore({ path, clock, scanDebounceSeconds: 0 });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('both watchdogs mark a timed-out attempt once and requeue the rollout once', async () => {
    const r = await a.startRollout({
      input: 1,
      workerId: 'w',
      config: { timeoutSeconds: 1, maxAttempts: 3, retryCondition: ['timeout'] },
    });
    clock.advance(2);
    await Promise.all([
      a.queryRollouts(),
      b.queryRollouts(),
      a.getRolloutById(r.rolloutId),
      b.getRolloutById(r.rolloutId),
    ]);
    expect((await b.queryAttempts({ rolloutId: r.rolloutId })).items.map((x) => x.status)).toEqual(['timeout']);
    expect((await a.getRolloutById(r.rolloutId))?.status).toBe('requeuing');
    expect((await b.getWorkerById('w'))?.status).toBe('unknown');
    expect((await b.dequeueRollout())?.attempt.sequenceId).toBe(2);
    expect(await a.dequeueRollout()).toBeNull();
  });

  it('interleaved dequeues through both connections claim each rollout once, in FIFO order', async () => {
    const made = await a.enqueueRollouts(Array.from({ length: 30 }, (_, i) => ({ input: i })));
    const claimed: string[] = [];
    for (let i = 0; i < 20; i++) {
      const [x, y] = await Promise.all([a.dequeueRollout(), b.dequeueRollout()]);
      for (const r of [x, y]) if (r) claimed.push(r.rolloutId);
    }
    expect(claimed).toEqual(made.map((r) => r.rolloutId));
  });

  it('a write through one connection is visible to the other at once', async () => {
    const r = await a.enqueueRollout({ input: 'x' });
    expect((await b.getRolloutById(r.rolloutId))?.input).toBe('x');
    await b.updateResources('main', { p: { resourceType: 'prompt_template', template: 't' } });
    expect((await a.getLatestResources())?.resourcesId).toBe('main');
    expect((await a.enqueueRollout({ input: 2 })).resourcesId).toBe('main');
  });

  it('a commit through the other connection wakes waitForQueue and waitForRollouts within the poll tick, without re-reading in between', async () => {
    const path = join(dir, 'shared.sqlite');
    const waiter = new SqliteStore({ path, clock, scanDebounceSeconds: 0, waitPollIntervalMs: 50 });
    try {
      const queued = waiter.waitForQueue({ timeoutMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 120));
      let started = Date.now();
      const r = await b.enqueueRollout({ input: 1 });
      expect(await queued).toBe(true);
      expect(Date.now() - started).toBeLessThan(2000);
      const finished = waiter.waitForRollouts([r.rolloutId], { timeoutSeconds: 20 });
      await b.dequeueRollout();
      await new Promise((resolve) => setTimeout(resolve, 120));
      started = Date.now();
      await b.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      expect((await finished).map((x) => x.status)).toEqual(['succeeded']);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await waiter.close();
    }
  });

  it("another connection's commits that queue nothing leave waitForQueue asleep (no empty dequeues for idle runners)", async () => {
    const path = join(dir, 'shared.sqlite');
    const waiter = new SqliteStore({ path, clock, scanDebounceSeconds: 0, waitPollIntervalMs: 30 });
    try {
      const running = await b.startRollout({ input: 'busy' });
      let woke = false;
      const queued = waiter.waitForQueue({ timeoutMs: 20_000 }).then((q) => {
        woke = true;
        return q;
      });
      for (let i = 0; i < 5; i++) {
        await b.addSpan({
          rolloutId: running.rolloutId,
          attemptId: running.attempt.attemptId,
          sequenceId: i + 1,
          traceId: 't',
          spanId: `s${i}`,
          parentId: null,
          name: 'n',
          startTime: 1,
          endTime: 2,
        });
        await new Promise((resolve) => setTimeout(resolve, 60)); // two ticks see each commit
      }
      expect(woke).toBe(false);
      await b.enqueueRollout({ input: 'work' });
      expect(await queued).toBe(true);
    } finally {
      await waiter.close();
    }
  });
});

describe('writes while another connection holds the write lock', () => {
  let dir: string;
  let path: string;
  let holder: Database.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agl-sqlite-lock-'));
    path = join(dir, 'locked.sqlite');
    new SqliteStore({ path }).close();
    holder = new Database(path);
  });
  afterEach(() => {
    if (holder.inTransaction) holder.exec('ROLLBACK');
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tryTransaction returns WRITE_LOCK_BUSY at once without running fn, keeps the busy timeout, and runs fn once the lock is free', () => {
    const db = new Database(path, { timeout: 2000 });
    const storage = new SqliteStorage(db);
    try {
      holder.exec('BEGIN IMMEDIATE');
      let ran = 0;
      const t0 = performance.now();
      expect(storage.tryTransaction(() => (ran += 1))).toBe(WRITE_LOCK_BUSY);
      expect(performance.now() - t0).toBeLessThan(1000); // the 2 s busy handler did not run
      expect(ran).toBe(0);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(2000);
      holder.exec('COMMIT');
      expect(storage.tryTransaction(() => (ran += 1))).toBe(1);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(2000);
      // An error of fn itself is thrown, not taken for a busy lock, and the transaction is rolled back.
      expect(() =>
        storage.tryTransaction(() => {
          storage.putResources({ resourcesId: 'r1', resources: {}, createTime: 1, updateTime: 1, version: 1 } as never);
          throw Object.assign(new Error('inner'), { code: 'SQLITE_BUSY' });
        }),
      ).toThrow('inner');
      expect(storage.read(() => storage.getLatestResourcesId())).toBeNull();
    } finally {
      db.close();
    }
  });

  it("a store's queued writes wait without blocking the event loop, then commit once the lock is released", async () => {
    const store = new SqliteStore({ path, busyTimeoutMs: 2000 });
    try {
      holder.exec('BEGIN IMMEDIATE');
      const writing = store.enqueueRollouts([{ input: 1 }, { input: 2 }]);
      const more = store.enqueueRollout({ input: 3 });
      let ticks = 0;
      const ticker = setInterval(() => (ticks += 1), 5);
      await new Promise((resolve) => setTimeout(resolve, 60));
      clearInterval(ticker);
      expect(ticks).toBeGreaterThanOrEqual(3); // timers ran while the writes waited for the lock
      holder.exec('COMMIT');
      expect((await writing).map((r) => r.input)).toEqual([1, 2]);
      expect((await more).input).toBe(3);
      expect((await store.queryRollouts()).items.map((r) => r.input)).toEqual([1, 2, 3]);
    } finally {
      await store.close();
    }
  });

  it('after the yielding window the writes wait in the busy handler, and fail with SQLITE_BUSY when the lock outlasts the busy timeout', async () => {
    const store = new SqliteStore({ path, busyTimeoutMs: 150 });
    try {
      holder.exec('BEGIN IMMEDIATE');
      const t0 = performance.now();
      await expect(store.enqueueRollout({ input: 1 })).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
      expect(performance.now() - t0).toBeGreaterThanOrEqual(200); // ~100 ms yielding, then the 150 ms busy timeout
      holder.exec('ROLLBACK');
      // Nothing was half-written, and the store works again.
      expect((await store.enqueueRollout({ input: 2 })).input).toBe(2);
      expect((await store.queryRollouts()).items.map((r) => r.input)).toEqual([2]);
    } finally {
      await store.close();
    }
  });
});
