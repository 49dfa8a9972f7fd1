import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { emitReward } from '@agl/core/tracer';
import { SqliteStore } from '@agl/store/sqlite';
import { useTempDirs } from '@agl/testing';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { litAgent } from '../agent/lit-agent';
import type { Algorithm } from '../algorithms/algorithm';
import { Baseline } from '../algorithms/baseline';
import type { ProgressSnapshot } from './progress';
import { Trainer } from './trainer';

describe('Trainer', () => {
  const temp = useTempDirs();
  let dir: string;
  beforeAll(async () => {
    dir = await temp.make('agl-trainer-');
  });

  it('dev() runs a JSONL dataset once with Baseline on an embedded SQLite file and reports progress', async () => {
    const dataset = join(dir, 'tasks.jsonl');
    await writeFile(dataset, ['{"id":"a","x":1}', '{"id":"b","x":2}', '{"id":"c","x":3}'].join('\n'));
    const path = join(dir, 'dev.sqlite');
    const snapshots: ProgressSnapshot[] = [];
    const seen: string[] = [];
    const agent = litAgent({
      rollout: async (task: { id: string; x: number }, _resources, ctx) => {
        seen.push(`${task.id}:${ctx.mode}`);
        emitReward(task.x / 10);
        return task.x;
      },
    });
    const result = await new Trainer({
      store: path,
      nRunners: 2,
      onProgress: (s) => snapshots.push(s),
      progressIntervalSeconds: 0.05,
    }).dev(agent as never, { dataset });
    expect(seen.sort()).toEqual(['a:val', 'b:val', 'c:val']);
    expect(result.runner).toEqual({ started: 3, succeeded: 3, failed: 0 });
    expect(result.progress).toMatchObject({ succeeded: 3, failed: 0, total: 3, meanReward: 2 });
    expect(snapshots.at(-1)).toEqual(result.progress);
    const store = new SqliteStore({ path });
    try {
      const rollouts = (await store.queryRollouts({})).items;
      expect(rollouts.map((r) => (r.metadata as { task_id: string }).task_id).sort()).toEqual(['a', 'b', 'c']);
    } finally {
      await store.close();
    }
  });

  it('fit() hands the algorithm the datasets, adapter and signal, then stops the runners', async () => {
    const calls: unknown[] = [];
    const algorithm: Algorithm = {
      name: 'probe',
      async run({ store, train, val, adapter, initialResources, signal }) {
        calls.push([train, val, typeof adapter.adapt, initialResources, signal.aborted]);
        const r = await store.enqueueRollout({ input: 'only', mode: 'val' });
        await store.waitForRollouts([r.rolloutId], { timeoutSeconds: 10 });
        const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
        calls.push((await adapter.adapt(spans)).finalReward);
      },
    };
    const result = await new Trainer({
      algorithm,
      store: join(dir, 'fit.sqlite'),
      initialResources: { p: { resourceType: 'prompt_template', template: 'x' } },
    }).fit(async () => 0.25, {
      train: [1, 2],
      val: (function* () {
        yield 3;
      })(),
    });
    expect(calls).toEqual([
      [[1, 2], [3], 'function', { p: { resourceType: 'prompt_template', template: 'x' } }, false],
      0.25,
    ]);
    expect(result.runner.succeeded).toBe(1);
  });

  it('fit() and dev() end with a summary on stderr (rollouts by status, mean reward, the store, next commands) unless quiet', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const path = join(dir, 'summary.sqlite');
      const agent = async (task: { x: number }): Promise<number> => {
        if (task.x === 3) throw new Error('boom');
        return task.x / 2;
      };
      await new Trainer({ store: path }).dev(agent as never, { dataset: [{ x: 1 }, { x: 2 }, { x: 3 }] });
      const text = lines.join('');
      expect(text).toMatch(/^dev: 3 rollouts in \d+\.\ds: 2 succeeded, 1 failed; mean final reward 0\.750\.$/mu);
      expect(text).toContain(`store: ${path}`);
      expect(text).toContain(`npx agl rollouts list --store ${path}`);
      expect(text).toContain(`npx agl store serve --db ${path}`);
      lines.length = 0;
      await new Trainer({ store: path, quiet: true }).dev(agent as never, { dataset: [{ x: 1 }] });
      expect(lines.join('')).toBe('');
    } finally {
      spy.mockRestore();
    }
  });

  it('Baseline refuses empty datasets and the trainer rejects a bad nRunners', async () => {
    await expect(
      new Trainer({ store: join(dir, 'empty.sqlite'), algorithm: new Baseline() }).fit(async () => 1, { train: [] }),
    ).rejects.toThrow(/nothing to run/u);
    expect(() => new Trainer({ nRunners: 0 })).toThrow(/nRunners must be an integer/u);
  });
});
