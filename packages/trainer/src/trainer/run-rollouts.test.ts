import { join } from 'node:path';
import { emitReward } from '@agl/core/tracer';
import { recordFeedback } from '@agl/core/store';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { useTempDirs } from '@agl/testing';
import { describe, expect, it, vi } from 'vitest';
import { litAgent } from '../agent/lit-agent';
import { trackRunRollouts } from './run-rollouts';
import { Trainer } from './trainer';

/** 30 finished production rollouts with reward 0, made before the run. */
async function seedUnrelated(store: SqliteStore | MemoryStore): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const r = await store.startRollout({ input: { q: i }, mode: null, metadata: { source: 'production' } });
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    await recordFeedback(store, r.rolloutId, 0);
  }
}

describe('a run counts only the rollouts it made', () => {
  const temp = useTempDirs();

  it('trackRunRollouts records what enqueueRollout(s) and startRollout create, and passes every other call through', async () => {
    const store = new MemoryStore();
    const before = await store.enqueueRollout({ input: 'earlier' });
    const run = trackRunRollouts(store);
    const one = await run.store.enqueueRollout({ input: 1 });
    const two = await run.store.enqueueRollouts([{ input: 2 }, { input: 3 }]);
    const started = await run.store.startRollout({ input: 4 });
    expect([...run.ids]).toEqual([one.rolloutId, ...two.map((r) => r.rolloutId), started.rolloutId]);
    expect(run.ids.has(before.rolloutId)).toBe(false);
    expect((await run.store.queryRollouts({})).total).toBe(5);
    expect(run.store).toBeInstanceOf(MemoryStore);
    await run.store.close();
  });

  it('Trainer.dev after 30 unrelated rollouts reports only its own: progress, summary and rolloutIds', async () => {
    const path = join(await temp.make('agl-run-rollouts-'), 'store.sqlite');
    const seeded = new SqliteStore({ path });
    await seedUnrelated(seeded);
    await seeded.close();
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    let result;
    try {
      const agent = litAgent({
        rollout: async (task: { x: number }) => {
          emitReward(1);
          return task.x;
        },
      });
      result = await new Trainer({ store: path }).dev(agent as never, { dataset: [{ x: 1 }, { x: 1 }, { x: 1 }] });
    } finally {
      spy.mockRestore();
    }
    expect(result.progress).toMatchObject({ total: 3, succeeded: 3, failed: 0, meanReward: 1 });
    expect(result.rolloutIds).toHaveLength(3);
    expect(lines.join('')).toMatch(
      /^dev: 3 rollouts in \d+\.\ds: 3 succeeded, 0 failed; mean final reward 1\.000\.$/mu,
    );
    const store = new SqliteStore({ path });
    try {
      expect((await store.queryRollouts({})).total).toBe(33);
    } finally {
      await store.close();
    }
  });
});
