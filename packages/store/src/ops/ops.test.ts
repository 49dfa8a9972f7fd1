import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightningStore } from '@agl/core/store';
import { FakeClock } from '@agl/testing';
import { PostgresStore } from '../postgres/index';
import { PG_ENABLED, PG_URL, dropSchema, freshSchema } from '../postgres/__fixtures__/pg-test-env';
import { SqliteStore } from '../sqlite/index';
import { backupStore, exportStore, importStore, pruneStore } from './index';

const dir = mkdtempSync(join(tmpdir(), 'agl-ops-'));
const source = join(dir, 'source.sqlite');
const dump = join(dir, 'dump.jsonl');
let ids: { done: string[]; queued: string; running: string; retried: string } = {
  done: [],
  queued: '',
  running: '',
  retried: '',
};

/** A store with every kind of record: resources (two versions), workers, finished/queued/running/retried rollouts, spans. */
async function fill(store: LightningStore, clock: FakeClock): Promise<void> {
  const rs = await store.addResources({ prompt: { resourceType: 'prompt_template', template: 'v1 {q}' } });
  await store.updateResources(rs.resourcesId, { prompt: { resourceType: 'prompt_template', template: 'v2 {q}' } });
  await store.updateResources('named', { llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:1/v1', model: 'm' } });
  await store.updateWorker('w-1', { heartbeatStats: { host: 'h' } });
  const done: string[] = [];
  for (let i = 0; i < 6; i += 1) {
    clock.advance(60);
    const r = await store.startRollout({
      input: { q: i, text: 'ünïcode ✓' },
      mode: i % 2 ? 'train' : 'val',
      workerId: 'w-1',
      metadata: { task_id: `t${i}` },
    });
    await store.addSpans([
      {
        rolloutId: r.rolloutId,
        attemptId: r.attempt.attemptId,
        sequenceId: 1,
        traceId: `tr${i}`,
        spanId: `a${i}`,
        parentId: null,
        name: 'agent',
        startTime: 1,
        endTime: 2,
        attributes: { 'agent.name': 'x', n: i },
      },
      {
        rolloutId: r.rolloutId,
        attemptId: r.attempt.attemptId,
        sequenceId: 2,
        traceId: `tr${i}`,
        spanId: `b${i}`,
        parentId: `a${i}`,
        name: 'openai.chat.completion',
        startTime: 1.5,
        endTime: 1.9,
        attributes: { 'gen_ai.prompt.0.content': 'hi' },
        extraKey: { kept: true },
      } as never,
    ]);
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: i === 3 ? 'failed' : 'succeeded' });
    done.push(r.rolloutId);
  }
  clock.advance(60);
  const retried = await store.enqueueRollout({
    input: 'retry',
    config: { maxAttempts: 3, retryCondition: ['failed'] },
  });
  const first = (await store.dequeueRollout({ workerId: 'w-2' }))!;
  await store.updateAttempt(first.rolloutId, first.attempt.attemptId, { status: 'failed' });
  const second = (await store.dequeueRollout({ workerId: 'w-2' }))!;
  await store.addSpan({
    rolloutId: second.rolloutId,
    attemptId: second.attempt.attemptId,
    sequenceId: 7,
    traceId: 'r',
    spanId: 'r1',
    parentId: null,
    name: 'retry',
    startTime: 1,
    endTime: 2,
  });
  const running = second.rolloutId;
  const queued = (await store.enqueueRollout({ input: 'waiting' })).rolloutId;
  await store.getNextSpanSequenceId(done[0]!, 'whatever');
  ids = { done, queued, running, retried: retried.rolloutId };
}

/** Everything a client can observe, through the public interface only. */
async function observe(store: LightningStore): Promise<unknown> {
  const rollouts = (await store.queryRollouts()).items;
  const perRollout: Record<string, unknown> = {};
  for (const r of rollouts) {
    perRollout[r.rolloutId] = {
      attempts: (await store.queryAttempts({ rolloutId: r.rolloutId })).items,
      spans: (await store.querySpans({ rolloutId: r.rolloutId })).items,
      latestSpans: (
        await store.querySpans({ rolloutId: r.rolloutId, attemptId: 'latest', sortBy: 'start_time', sortOrder: 'desc' })
      ).items,
    };
  }
  const stats = await store.statistics();
  return {
    rollouts,
    byStart: (await store.queryRollouts({ sortBy: 'startTime', sortOrder: 'desc', limit: 4, offset: 1 })).items.map(
      (r) => r.rolloutId,
    ),
    byStatus: (
      await store.queryRollouts({ statusIn: ['succeeded', 'queuing'], modeIn: ['train', null], filterLogic: 'or' })
    ).total,
    perRollout,
    resources: (await store.queryResources()).items,
    latest: await store.getLatestResources(),
    workers: (await store.queryWorkers()).items,
    totals: [stats.totalRollouts, stats.totalAttempts, stats.totalSpans, stats.totalResources, stats.totalWorkers],
  };
}

/** The queue order and counters, observed by draining (changes the store: call last, never on the source). */
async function drain(store: LightningStore): Promise<unknown> {
  const claimed = await store.dequeueRollouts({ limit: 10 });
  return { queue: claimed.map((r) => r.rolloutId), next: await store.getNextSpanSequenceId(ids.done[0]!, 'x') };
}

let expected: unknown;

beforeAll(async () => {
  const clock = new FakeClock();
  const store = new SqliteStore({ path: source, clock });
  await fill(store, clock);
  expected = await observe(store);
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('agl store export / import (portable dump)', () => {
  it('exports every record and re-imports it into a new SQLite file with identical query results', async () => {
    const counts = await exportStore({ db: source, out: dump });
    expect(counts).toEqual({ rollouts: 8, attempts: 8, spans: 13, resources: 2, workers: 2, sequences: 7, queued: 1 });
    const lines = readFileSync(dump, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string });
    expect(lines[0]).toMatchObject({ kind: 'header', format: 'agl-store-dump', version: 1 });
    expect(lines.at(-1)?.kind).toBe('end');

    const copy = join(dir, 'copy.sqlite');
    expect(await importStore({ db: copy, in: dump })).toEqual(counts);
    const b = new SqliteStore({ path: copy });
    expect(await observe(b)).toEqual(expected);
    expect(await drain(b)).toEqual({ queue: [ids.queued], next: 4 });
    await b.close();
  });

  it('refuses a non-empty target and a truncated dump, changing nothing', async () => {
    await expect(importStore({ db: source, in: dump })).rejects.toThrow(/is not empty/);
    const cut = join(dir, 'cut.jsonl');
    writeFileSync(cut, readFileSync(dump, 'utf8').split('\n').slice(0, 12).join('\n'));
    const target = join(dir, 'cut.sqlite');
    await expect(importStore({ db: target, in: cut })).rejects.toThrow(/truncated/);
    const store = new SqliteStore({ path: target });
    expect((await store.statistics()).totalRollouts).toBe(0);
    await store.close();
  });

  describe.runIf(PG_ENABLED)('SQLite → PostgreSQL', () => {
    const schema = freshSchema('import');
    afterAll(() => dropSchema(schema));

    it('an export from SQLite imported into PostgreSQL answers every query identically', async () => {
      const url = `${PG_URL}?schema=${schema}`;
      await importStore({ db: url, in: dump });
      const pgStore = await PostgresStore.open({ connectionString: url });
      try {
        expect(await observe(pgStore)).toEqual(expected);
        // and back: PostgreSQL → dump → SQLite is identical too
        const back = join(dir, 'back.jsonl');
        await exportStore({ db: url, out: back });
        const again = join(dir, 'again.sqlite');
        await importStore({ db: again, in: back });
        const s2 = new SqliteStore({ path: again });
        expect(await observe(s2)).toEqual(expected);
        await s2.close();
        expect(await drain(pgStore)).toEqual({ queue: [ids.queued], next: 4 });
      } finally {
        await pgStore.close();
      }
    });
  });
});

describe('agl store prune / backup', () => {
  it('--keep-last keeps the newest rollouts and never deletes queued or running ones (SQLite)', async () => {
    const target = join(dir, 'prune-keep.sqlite');
    await importStore({ db: target, in: dump });
    expect(await pruneStore({ db: target, keepLast: 3, dryRun: true })).toEqual({
      rollouts: 5,
      attempts: 5,
      spans: 10,
    });
    expect(await pruneStore({ db: target, keepLast: 3 })).toEqual({ rollouts: 5, attempts: 5, spans: 10 });
    const store = new SqliteStore({ path: target });
    const left = (await store.queryRollouts()).items.map((r) => r.rolloutId);
    expect(left).toEqual([ids.done[5], ids.retried, ids.queued]);
    expect((await store.statistics()).totalSpans).toBe(3);
    await store.close();
  });

  it('--before deletes finished rollouts that ended before the date', async () => {
    const target = join(dir, 'prune-before.sqlite');
    await importStore({ db: target, in: dump });
    const store = new SqliteStore({ path: target });
    const third = (await store.getRolloutById(ids.done[2]!))!;
    await store.close();
    const result = await pruneStore({ db: target, before: new Date((third.endTime! + 1) * 1000) });
    expect(result.rollouts).toBe(3);
    const reopened = new SqliteStore({ path: target });
    expect((await reopened.queryRollouts()).items.map((r) => r.rolloutId)).toEqual([
      ...ids.done.slice(3),
      ids.retried,
      ids.queued,
    ]);
    await reopened.close();
    await expect(pruneStore({ db: target })).rejects.toThrow(/exactly one of --before/);
  });

  it.runIf(PG_ENABLED)('prunes a PostgreSQL store the same way', async () => {
    const schema = freshSchema('prune');
    const url = `${PG_URL}?schema=${schema}`;
    try {
      await importStore({ db: url, in: dump });
      expect(await pruneStore({ db: url, keepLast: 3 })).toEqual({ rollouts: 5, attempts: 5, spans: 10 });
      const store = await PostgresStore.open({ connectionString: url });
      expect((await store.queryRollouts()).items.map((r) => r.rolloutId)).toEqual([
        ids.done[5],
        ids.retried,
        ids.queued,
      ]);
      expect((await store.dequeueRollout())?.rolloutId).toBe(ids.queued);
      await store.close();
    } finally {
      await dropSchema(schema);
    }
  });

  it('backs up a SQLite store online (while it is open) and never overwrites; PostgreSQL gets pg_dump guidance', async () => {
    const live = new SqliteStore({ path: source });
    const out = join(dir, 'backup.sqlite');
    const result = await backupStore({ db: source, out });
    expect(result.kind).toBe('sqlite');
    await live.enqueueRollout({ input: 'after the backup' });
    const copy = new SqliteStore({ path: out });
    expect(await observe(copy)).toEqual(expected);
    await copy.close();
    await live.close();
    await expect(backupStore({ db: source, out })).rejects.toThrow(/already exists/);
    const pgResult = await backupStore({ db: 'postgres://agl:pw@db.example:5432/agl?schema=runs', out: 'agl.dump' });
    expect(pgResult.kind).toBe('postgres');
    const guidance = pgResult.kind === 'postgres' ? pgResult.guidance : '';
    expect(guidance).toContain('pg_dump --format=custom --schema=runs --file=agl.dump');
    expect(guidance).toContain('pg_restore');
    expect(guidance).not.toContain(':pw@');
  });
});
