import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findFinalReward } from '@agl/core/transitions';
import type { LightningStore } from '@agl/core';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../src/index';

const AGENT = fileURLToPath(new URL('./fixtures/thread-agent.ts', import.meta.url));

/** A Runner whose workers run the fixture agent on two threads, polling every 50 ms. */
function threadRunner(store: LightningStore, options: { nWorkers: number; maxRollouts?: number }): Runner {
  return new Runner({
    store,
    workerMode: 'thread',
    threads: 2,
    agentModule: { path: AGENT },
    pollIntervalSeconds: 0.05,
    ...options,
  });
}

/** Per rollout: the final reward (the id of the thread that ran it) and the worker of its attempt. */
async function outcomes(
  store: LightningStore,
  ids: string[],
): Promise<Array<{ status: string; thread: number | null; workerId: string | null }>> {
  return Promise.all(
    ids.map(async (id) => {
      const rollout = await store.getRolloutById(id);
      const [attempt] = (await store.queryAttempts({ rolloutId: id })).items;
      const spans = (await store.querySpans({ rolloutId: id })).items;
      return { status: rollout!.status, thread: findFinalReward(spans), workerId: attempt?.workerId ?? null };
    }),
  );
}

describe("Runner workerMode 'thread'", { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agl-threads-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('spreads the workers over threads that each open the same SQLite file, and runs every rollout once', async () => {
    const store = new SqliteStore({ path: join(dir, 'threads.sqlite') });
    try {
      const made = await store.enqueueRollouts(Array.from({ length: 24 }, () => ({ input: { waitMs: 20 } })));
      const runner = threadRunner(store, { nWorkers: 4, maxRollouts: 24 });
      let ready = false;
      void runner.ready.then(() => (ready = true));
      const running = runner.run();
      await runner.ready;
      expect(ready).toBe(true);
      const stats = await running;
      expect(stats).toEqual({ started: 24, succeeded: 24, failed: 0 });
      const done = await outcomes(
        store,
        made.map((r) => r.rolloutId),
      );
      expect(done.every((d) => d.status === 'succeeded')).toBe(true);
      // Two runner threads (never the main thread, id 0); Worker-1 and Worker-2 on one, Worker-3 and Worker-4 on the other.
      const threadOf = new Map<string, Set<number>>();
      for (const d of done) threadOf.set(d.workerId!, (threadOf.get(d.workerId!) ?? new Set()).add(d.thread!));
      expect([...threadOf.keys()].every((w) => /^Worker-[1-4]$/.test(w))).toBe(true);
      expect([...threadOf.values()].every((s) => s.size === 1)).toBe(true);
      const threads = new Set(done.map((d) => d.thread));
      expect(threads.size).toBe(2);
      expect(threads.has(0)).toBe(false);
      for (const [a, b] of [
        ['Worker-1', 'Worker-2'],
        ['Worker-3', 'Worker-4'],
      ] as const) {
        if (threadOf.has(a) && threadOf.has(b)) expect([...threadOf.get(a)!]).toEqual([...threadOf.get(b)!]);
      }
    } finally {
      await store.close();
    }
  });

  it('reaches any other store over HTTP (a loopback server the runner starts), and stops when told', async () => {
    const store = new MemoryStore();
    try {
      const made = await store.enqueueRollouts(Array.from({ length: 6 }, () => ({ input: {} })));
      const runner = threadRunner(store, { nWorkers: 2 });
      const running = runner.run();
      const finished = await store.waitForRollouts(
        made.map((r) => r.rolloutId),
        { timeoutSeconds: 60 },
      );
      runner.stop();
      expect(await running).toMatchObject({ succeeded: 6, failed: 0 });
      expect(finished.map((r) => r.status)).toEqual(Array(6).fill('succeeded'));
      expect(
        new Set(
          (
            await outcomes(
              store,
              made.map((r) => r.rolloutId),
            )
          ).map((d) => d.thread),
        ).has(0),
      ).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('rejects with a clear error, without restarting threads, when the module has no such export', async () => {
    const store = new SqliteStore({ path: join(dir, 'bad-export.sqlite') });
    try {
      await store.enqueueRollout({ input: {} });
      const warnings: string[] = [];
      const runner = new Runner({
        store,
        workerMode: 'thread',
        threads: 2,
        agentModule: { path: AGENT, exportName: 'missing' },
        nWorkers: 2,
        logger: { warn: (m) => warnings.push(m) },
      });
      await expect(runner.run()).rejects.toThrow(/has no export named missing/);
      expect(warnings.filter((w) => w.includes('replacement'))).toEqual([]);
      expect(() => new Runner({ store, workerMode: 'thread', nWorkers: 2 })).toThrow(/needs agentModule/);
      expect(() => new Runner({ store, workerMode: 'thread', agentModule: { path: AGENT }, threads: 0 })).toThrow(
        /threads must be an integer ≥ 1; got 0/,
      );
    } finally {
      await store.close();
    }
  });
});
