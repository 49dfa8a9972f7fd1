import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@agl/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
    const r = await a.startRollout({ input: 1, workerId: 'w', config: { timeoutSeconds: 1, maxAttempts: 3, retryCondition: ['timeout'] } });
    clock.advance(2);
    await Promise.all([a.queryRollouts(), b.queryRollouts(), a.getRolloutById(r.rolloutId), b.getRolloutById(r.rolloutId)]);
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
        await b.addSpan({ rolloutId: running.rolloutId, attemptId: running.attempt.attemptId, sequenceId: i + 1, traceId: 't', spanId: `s${i}`, parentId: null, name: 'n', startTime: 1, endTime: 2 });
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
