import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from '@agl/store';
import { FakeClock, seedRecorded } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Trainer } from '../trainer/trainer';
import { buildDataset, inputHashFraction, valPathOf, writeDatasetFiles } from './build-dataset';
import { parseTimeBound } from './time-bound';

const T0 = 1_800_000_000;
const ids = (lines: { _agl: { rollout_id: string } }[]): string[] => lines.map((l) => l._agl.rollout_id);

describe('buildDataset', () => {
  const clock = new FakeClock(T0);
  const store = new MemoryStore({ clock });
  const r: Record<string, string> = {};
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agl-dataset-'));
    const prod = (agent: string) => ({ source: 'production', agent_name: agent });
    r.a = await seedRecorded(store, {
      input: { q: 'a' },
      metadata: prod('support'),
      reward: 0.2,
      feedback: [1],
      resourcesId: 'rs-1',
    });
    clock.advance(3600);
    r.b = await seedRecorded(store, { input: { q: 'b' }, metadata: prod('billing'), reward: 0.9 });
    clock.advance(3600);
    r.c = await seedRecorded(store, { input: 'plain text', metadata: { source: 'unscoped' }, judge: 0.4 });
    clock.advance(3600);
    r.d = await seedRecorded(store, { input: { q: 'a' }, metadata: prod('support'), reward: 0.6, feedback: [0, 0.5] });
    clock.advance(3600);
    r.e = await seedRecorded(store, { input: { q: 'e' }, mode: 'train', spanAgent: 'support', reward: 1 });
    clock.advance(3600);
    r.f = await seedRecorded(store, { input: { q: 'f' }, metadata: prod('support') });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes one line per rollout: the input spread (or under `input`) plus _agl with the final reward and feedback', async () => {
    const { train, val, scanned } = await buildDataset(store);
    expect(scanned).toBe(6);
    expect(val).toEqual([]);
    expect(ids(train)).toEqual([r.a, r.b, r.c, r.d, r.e, r.f]);
    expect(train[0]).toEqual({
      q: 'a',
      _agl: {
        rollout_id: r.a,
        reward: 1,
        feedback: [{ reward: 1, comment: 'first', dimensions: {}, time: expect.any(Number) }],
        source: 'production',
        resources_id: 'rs-1',
      },
    });
    expect(train[2]).toMatchObject({ input: 'plain text', _agl: { reward: 0.4, source: 'unscoped', feedback: [] } });
    // The latest feedback wins over the agent's reward; an agent reward over a judge's.
    expect(train[3]?._agl.reward).toBe(0.5);
    expect(train[4]?._agl).toMatchObject({ reward: 1, source: 'train', resources_id: null });
    expect(train[5]?._agl.reward).toBeNull();
  });

  it('filters by source (metadata.source, else the mode; `any` keeps all)', async () => {
    expect(ids((await buildDataset(store, { sources: ['production'] })).train)).toEqual([r.a, r.b, r.d, r.f]);
    expect(ids((await buildDataset(store, { sources: ['unscoped', 'train'] })).train)).toEqual([r.c, r.e]);
    expect((await buildDataset(store, { sources: ['any'] })).train).toHaveLength(6);
  });

  it('filters by start time: since inclusive, until exclusive, relative forms against now', async () => {
    expect(ids((await buildDataset(store, { since: T0 + 3600, until: T0 + 3 * 3600 })).train)).toEqual([r.b, r.c]);
    const now = T0 + 5 * 3600;
    expect(ids((await buildDataset(store, { since: parseTimeBound('90m', now) })).train)).toEqual([r.e, r.f]);
    expect(parseTimeBound('7d', now)).toBe(now - 7 * 86_400);
    expect(parseTimeBound('2026-12-01T00:00:00Z', now)).toBe(Date.UTC(2026, 11, 1) / 1000);
    expect(() => parseTimeBound('yesterday', now, 'until')).toThrow(/--until got "yesterday".*7d/u);
  });

  it('filters by agent: metadata.agent_name, else the agent span', async () => {
    expect(ids((await buildDataset(store, { agents: ['support'] })).train)).toEqual([r.a, r.d, r.e, r.f]);
    expect(ids((await buildDataset(store, { agents: ['billing'] })).train)).toEqual([r.b]);
  });

  it('filters by final reward (no reward = dropped) and by feedback', async () => {
    expect(ids((await buildDataset(store, { minReward: 0.5 })).train)).toEqual([r.a, r.b, r.d, r.e]);
    expect(ids((await buildDataset(store, { maxReward: 0.5 })).train)).toEqual([r.c, r.d]);
    expect(ids((await buildDataset(store, { minReward: 0.5, maxReward: 0.95 })).train)).toEqual([r.b, r.d]);
    expect(ids((await buildDataset(store, { feedback: 'with' })).train)).toEqual([r.a, r.d]);
    expect(ids((await buildDataset(store, { feedback: 'without' })).train)).toEqual([r.b, r.c, r.e, r.f]);
  });

  it('dedupes on the input (the earliest kept) and limits to the newest N', async () => {
    expect(ids((await buildDataset(store, { dedupe: true })).train)).toEqual([r.a, r.b, r.c, r.e, r.f]);
    expect(ids((await buildDataset(store, { limit: 2 })).train)).toEqual([r.e, r.f]);
    expect(ids((await buildDataset(store, { dedupe: true, minReward: 0.5, limit: 10 })).train)).toEqual([
      r.a,
      r.b,
      r.e,
    ]);
  });

  it('rejects bad options with the field and the fix', async () => {
    await expect(buildDataset(store, { valFraction: 1.5 })).rejects.toThrow(
      /valFraction must be a number in \[0, 1\); got 1.5/u,
    );
    await expect(buildDataset(store, { limit: 0 })).rejects.toThrow(/limit must be an integer ≥ 1; got 0/u);
  });

  it('splits by a hash of the input: same files on a re-run, added rollouts never move old ones', async () => {
    const big = new MemoryStore();
    for (let i = 0; i < 40; i += 1)
      await seedRecorded(big, { input: { n: i }, metadata: { source: 'production' }, reward: 1 });
    const out = join(dir, 'split', 'tasks.jsonl');
    const first = await buildDataset(big, { valFraction: 0.25 });
    const paths = await writeDatasetFiles(out, first, true);
    expect(paths.valOut).toBe(valPathOf(paths.out));
    expect(paths.valOut).toBe(join(dir, 'split', 'tasks.val.jsonl'));
    const [trainText, valText] = await Promise.all([readFile(paths.out, 'utf8'), readFile(paths.valOut!, 'utf8')]);
    expect(first.val.length).toBeGreaterThan(4);
    expect(first.val.length).toBeLessThan(16);
    expect(first.train.length + first.val.length).toBe(40);
    for (const line of first.val) expect(inputHashFraction({ n: line.n })).toBeLessThan(0.25);
    // Re-run: byte-identical files.
    await writeDatasetFiles(out, await buildDataset(big, { valFraction: 0.25 }), true);
    expect(await readFile(paths.out, 'utf8')).toBe(trainText);
    expect(await readFile(paths.valOut!, 'utf8')).toBe(valText);
    // More rollouts: every old task stays on its side.
    for (let i = 40; i < 80; i += 1)
      await seedRecorded(big, { input: { n: i }, metadata: { source: 'production' }, reward: 1 });
    const second = await buildDataset(big, { valFraction: 0.25 });
    const valIds = new Set(ids(second.val));
    for (const id of ids(first.val)) expect(valIds.has(id)).toBe(true);
    for (const id of ids(first.train)) expect(valIds.has(id)).toBe(false);
    expect(second.train.length + second.val.length).toBe(80);
  });

  it('round trip: Trainer.dev runs the written file, the agent gets each line as its task', async () => {
    const out = join(dir, 'dev', 'tasks.jsonl');
    await writeDatasetFiles(out, await buildDataset(store, { sources: ['production'], minReward: 0 }), false);
    const seen: unknown[] = [];
    const devStore = new MemoryStore();
    const result = await new Trainer({ store: devStore, quiet: true, pollIntervalSeconds: 0.01 }).dev(
      async (input: unknown) => {
        const task = input as { q: string; _agl: { reward: number } };
        seen.push(task);
        return task._agl.reward;
      },
      { dataset: out },
    );
    expect(result.progress?.succeeded).toBe(3);
    expect(result.progress?.meanReward).toBeCloseTo((1 + 0.9 + 0.5) / 3, 10);
    expect(seen.map((t) => (t as { q: string }).q).sort()).toEqual(['a', 'a', 'b']);
    const inputs = (await devStore.queryRollouts()).items.map(
      (x) => x.input as { q: string; _agl: { rollout_id: string } },
    );
    expect(inputs.map((i) => i._agl.rollout_id).sort()).toEqual([r.a, r.b, r.d].sort());
  });
});
