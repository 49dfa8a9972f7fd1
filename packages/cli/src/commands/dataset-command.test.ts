import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer } from '@agl/store/server';
import { seedRecorded } from '@agl/testing';
import { cli } from './__fixtures__/run-cli';

const lines = (path: string): Array<Record<string, unknown> & { _agl: Record<string, unknown> }> =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown> & { _agl: Record<string, unknown> });

describe('agl dataset build on a SQLite store file', () => {
  let dir: string;
  let db: string;
  const ids: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-dataset-cli-'));
    db = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path: db });
    const prod = { source: 'production', agent_name: 'support' };
    ids.push(await seedRecorded(store, { input: { q: 'refund?' }, metadata: prod, reward: 0.2, feedback: [1] }));
    ids.push(await seedRecorded(store, { input: { q: 'refund?' }, metadata: prod, reward: 0.7 }));
    ids.push(await seedRecorded(store, { input: { q: 'invoice' }, metadata: { source: 'unscoped' }, reward: 0.1 }));
    ids.push(await seedRecorded(store, { input: { q: 'train task' }, mode: 'train', reward: 1 }));
    await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the filtered task lines (CONTRACTS.md E) and reports the counts', async () => {
    const out = join(dir, 'prod', 'tasks.jsonl');
    const run = await cli(
      'dataset',
      'build',
      '--store',
      db,
      '--out',
      out,
      '--source',
      'production',
      '--dedupe',
      '--json',
    );
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({
      scanned: 4,
      train: 1,
      val: 0,
      out: resolve(out),
      val_out: null,
      redaction: { enabled: true, masked: 0, byDetector: {}, tokenIdsDropped: 0 },
    });
    expect(lines(out)).toEqual([
      {
        q: 'refund?',
        _agl: {
          rollout_id: ids[0],
          reward: 1,
          feedback: [{ reward: 1, comment: 'first', dimensions: {}, time: expect.any(Number) }],
          source: 'production',
          resources_id: null,
        },
      },
    ]);
  });

  it('combines reward, feedback, agent and time filters; the val split goes next to --out', async () => {
    const out = join(dir, 'mixed.jsonl');
    const run = await cli(
      ...['dataset', 'build', '--store', db, '--out', out, '--min-reward', '0.5', '--feedback', 'without'],
      ...['--since', '1d', '--until', '2999-01-01', '--val-fraction', '0.5'],
    );
    expect(run.code).toBe(0);
    expect(run.out).toMatch(
      /wrote \d tasks to .*mixed\.jsonl \(from 4 rollouts\)\nwrote \d validation tasks to .*mixed\.val\.jsonl/u,
    );
    const all = [...lines(out), ...lines(join(dir, 'mixed.val.jsonl'))].map((l) => l._agl.rollout_id).sort();
    expect(all).toEqual([ids[1], ids[3]].sort());
    const agent = join(dir, 'agent.jsonl');
    expect(
      (await cli('dataset', 'build', '--store', db, '--out', agent, '--agent', 'support', '--limit', '1')).code,
    ).toBe(0);
    expect(lines(agent).map((l) => l._agl.rollout_id)).toEqual([ids[1]]);
  });

  it('reads a served store with --store-url and --token', async () => {
    const store = new SqliteStore({ path: db });
    const server = await createStoreServer({ store, port: 0, token: 'tok' });
    try {
      const out = join(dir, 'remote.jsonl');
      const run = await cli('dataset', 'build', '--store-url', server.url, '--token', 'tok', '--out', out, '--json');
      expect(run.err).toBe('');
      expect(JSON.parse(run.out)).toMatchObject({ scanned: 4, train: 4 });
      expect(lines(out).map((l) => l._agl.rollout_id)).toEqual(ids);
      expect((await cli('dataset', 'build', '--store-url', server.url, '--out', out)).err).toMatch(/401|token/iu);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('names the bad flag and the fix', async () => {
    const out = join(dir, 'bad.jsonl');
    expect((await cli('dataset', 'build', '--store', db, '--out', out, '--since', 'last week')).err).toMatch(
      /--since got "last week"; pass an ISO date .* 7d/u,
    );
    expect((await cli('dataset', 'build', '--store', db, '--out', out, '--status', 'done')).err).toMatch(
      /--status got "done"; use one or more of/u,
    );
  });

  it('agl train takes the written file as its train dataset', async () => {
    const out = join(dir, 'all.jsonl');
    expect((await cli('dataset', 'build', '--store', db, '--out', out)).code).toBe(0);
    process.env.AGL_TASKS_FILE = out;
    try {
      const trainDb = join(dir, 'train.sqlite');
      const entry = resolve(import.meta.dirname, '__fixtures__/dataset-train-entry.ts');
      const run = await cli('train', entry, '--store', trainDb, '--no-progress', '--json');
      expect(run.err).toBe('');
      const result = JSON.parse(run.out) as { progress: { succeeded: number; meanReward: number } };
      expect(result.progress).toMatchObject({ succeeded: 4, meanReward: 1 });
      const store = new SqliteStore({ path: trainDb });
      const inputs = (await store.queryRollouts()).items.map(
        (r) => (r.input as { _agl: { rollout_id: string } })._agl.rollout_id,
      );
      await store.close();
      expect(inputs.sort()).toEqual([...ids].sort());
    } finally {
      delete process.env.AGL_TASKS_FILE;
    }
  });

  it('agl train --train / --val take the written files over the entry module', async () => {
    const out = join(dir, 'split.jsonl');
    expect((await cli('dataset', 'build', '--store', db, '--out', out, '--val-fraction', '0.5')).code).toBe(0);
    const trainDb = join(dir, 'flags.sqlite');
    const entry = resolve(import.meta.dirname, '__fixtures__/dataset-train-entry.ts');
    const valOut = join(dir, 'split.val.jsonl');
    const run = await cli(
      'train',
      entry,
      '--store',
      trainDb,
      '--train',
      out,
      '--val',
      valOut,
      '--no-progress',
      '--json',
    );
    expect(run.err).toBe('');
    const store = new SqliteStore({ path: trainDb });
    const rollouts = (await store.queryRollouts()).items;
    await store.close();
    const idsOf = (mode: string): string[] =>
      rollouts
        .filter((r) => r.mode === mode)
        .map((r) => (r.input as { _agl: { rollout_id: string } })._agl.rollout_id)
        .sort();
    expect(idsOf('train')).toEqual(
      lines(out)
        .map((l) => l._agl.rollout_id)
        .sort(),
    );
    expect(idsOf('val')).toEqual(
      lines(valOut)
        .map((l) => l._agl.rollout_id)
        .sort(),
    );
    expect(idsOf('val').length).toBeGreaterThan(0);
  });
});
