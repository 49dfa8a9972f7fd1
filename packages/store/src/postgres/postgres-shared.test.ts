import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '@agl/testing';
import { PG_ENABLED, PG_URL, dropSchema, freshSchema } from './__fixtures__/pg-test-env';
import { PG_LATEST_MIGRATION, PostgresStore } from './index';

// PostgreSQL-specific behaviour: several stores (= several servers) on one schema, NOTIFY wake-ups, the watchdog's
// advisory lock, migrations, batched spans and JSONB attributes, and the error for an unreachable database.
describe.runIf(PG_ENABLED)('PostgresStore on a shared database', () => {
  const opened: PostgresStore[] = [];
  const schemas: string[] = [];
  const open = async (
    schema: string,
    extra: Partial<Parameters<typeof PostgresStore.open>[0]> = {},
  ): Promise<PostgresStore> => {
    const store = await PostgresStore.open({ connectionString: PG_URL, schema, poolSize: 6, ...extra });
    opened.push(store);
    return store;
  };
  const schema = (): string => {
    const name = freshSchema('shared');
    schemas.push(name);
    return name;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const name of schemas.splice(0)) await dropSchema(name);
  });

  it('two stores dequeue 200 rollouts in parallel: each rollout exactly once (FOR UPDATE SKIP LOCKED)', async () => {
    const s = schema();
    const a = await open(s);
    const b = await open(s);
    const made = await a.enqueueRollouts(Array.from({ length: 200 }, (_, i) => ({ input: i })));
    const claim = async (store: PostgresStore, worker: string): Promise<string[]> => {
      const ids: string[] = [];
      for (;;) {
        const batch = await store.dequeueRollouts({ limit: 3, workerId: worker });
        if (batch.length === 0) return ids;
        ids.push(...batch.map((r) => r.rolloutId));
      }
    };
    const results = await Promise.all([claim(a, 'a1'), claim(a, 'a2'), claim(b, 'b1'), claim(b, 'b2'), claim(b, 'b3')]);
    const all = results.flat();
    expect(all).toHaveLength(200);
    expect(new Set(all)).toEqual(new Set(made.map((r) => r.rolloutId)));
    expect((await b.statistics()).totalAttempts).toBe(200);
    expect(results.every((ids) => ids.length > 0)).toBe(true);
  });

  it('concurrent dequeuers never see an empty queue while unclaimed rollouts remain (SKIP LOCKED, not a lost race)', async () => {
    const s = schema();
    const stores = [await open(s), await open(s)];
    const total = 120;
    const workers = 8;
    await stores[0]!.enqueueRollouts(Array.from({ length: total }, (_, i) => ({ input: i })));
    let claimed = 0;
    const falseEmpties: number[] = [];
    const work = async (store: PostgresStore, worker: string): Promise<number> => {
      let mine = 0;
      for (;;) {
        const rollout = await store.dequeueRollout({ workerId: worker });
        if (rollout === null) {
          // An honest "empty": every rollout not yet handed out is being claimed by one of the other workers' calls
          // in flight (one each). More left over means this call lost a race for a row and gave up on the rest.
          if (total - claimed > workers - 1) falseEmpties.push(total - claimed);
          return mine;
        }
        claimed += 1;
        mine += 1;
      }
    };
    const counts = await Promise.all(Array.from({ length: workers }, (_, i) => work(stores[i % 2]!, `w${i}`)));
    expect(falseEmpties, 'rollouts left when a worker was told the queue is empty').toEqual([]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(total);
    expect((await stores[1]!.statistics()).totalAttempts).toBe(total);
  });

  it('NOTIFY wakes waitForRollouts and waitForQueue on another server at once (no polling)', async () => {
    const s = schema();
    const waiting = await open(s, { waitPollIntervalMs: 600_000 });
    const writer = await open(s);
    const r = await writer.startRollout({ input: 1 });
    const started = Date.now();
    const wait = waiting.waitForRollouts([r.rolloutId], { timeoutSeconds: 30 });
    const queue = waiting.waitForQueue({ timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await writer.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    await writer.enqueueRollout({ input: 2 });
    const done = await wait;
    expect(done.map((x) => [x.rolloutId, x.status])).toEqual([[r.rolloutId, 'succeeded']]);
    expect(await queue).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the watchdog runs on both servers at once but requeues a timed-out attempt once (advisory lock + row locks)', async () => {
    const s = schema();
    const clockA = new FakeClock();
    const clockB = new FakeClock();
    const a = await open(s, { clock: clockA, scanDebounceSeconds: 0 });
    const b = await open(s, { clock: clockB, scanDebounceSeconds: 0 });
    const rollouts = await a.enqueueRollouts(
      Array.from({ length: 20 }, (_, i) => ({
        input: i,
        config: { timeoutSeconds: 5, maxAttempts: 2, retryCondition: ['timeout' as const] },
      })),
    );
    await a.dequeueRollouts({ limit: 20, workerId: 'w' });
    clockA.advance(10);
    clockB.advance(10);
    await Promise.all([a.queryRollouts(), b.queryRollouts(), a.queryWorkers(), b.queryWorkers()]);
    const page = await a.queryRollouts({ rolloutIdIn: rollouts.map((r) => r.rolloutId) });
    expect(page.items.every((r) => r.status === 'requeuing')).toBe(true);
    const raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    try {
      const q = await raw.query<{ n: string; d: string }>(
        `SELECT COUNT(*) AS n, COUNT(DISTINCT rollout_id) AS d FROM "${s}".rollout_queue`,
      );
      expect(Number(q.rows[0]!.n)).toBe(20);
      expect(Number(q.rows[0]!.d)).toBe(20);
    } finally {
      await raw.end();
    }
    expect((await b.statistics()).totalAttempts).toBe(20);
  });

  it('re-runs a transaction that lost a deadlock (40P01) instead of failing the call', async () => {
    const store = await open(schema());
    const [r1, r2] = await store.enqueueRollouts([{ input: 1 }, { input: 2 }]);
    const db = store.database;
    let arrived = 0;
    let open2!: () => void;
    const bothLocked = new Promise<void>((resolve) => (open2 = resolve));
    const barrier = async (): Promise<void> => {
      arrived += 1;
      if (arrived === 2) open2();
      await bothLocked;
    };
    const runs = [0, 0];
    // Two transactions lock the same two rollouts in opposite orders: PostgreSQL aborts one with 40P01.
    const cross = (i: number, first: string, second: string) =>
      db.transaction(async (tx) => {
        runs[i]! += 1;
        await tx.getRollout(first);
        if (runs[i] === 1) await barrier();
        await tx.getRollout(second);
        return i;
      });
    expect(await Promise.all([cross(0, r1!.rolloutId, r2!.rolloutId), cross(1, r2!.rolloutId, r1!.rolloutId)])).toEqual(
      [0, 1],
    );
    expect(db.retries).toBe(1);
    expect(runs[0]! + runs[1]!).toBe(3);
  });

  it('migrations are versioned: a second open applies nothing, a newer schema is refused', async () => {
    const s = schema();
    await open(s);
    const raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    try {
      const rows = (
        await raw.query<{ version: number }>(`SELECT version FROM "${s}".schema_migrations ORDER BY version`)
      ).rows;
      expect(rows.map((r) => r.version)).toEqual(Array.from({ length: PG_LATEST_MIGRATION }, (_, i) => i + 1));
      await open(s);
      expect((await raw.query(`SELECT version FROM "${s}".schema_migrations`)).rowCount).toBe(PG_LATEST_MIGRATION);
      await raw.query(`INSERT INTO "${s}".schema_migrations VALUES (999, 'future', 0)`);
    } finally {
      await raw.end();
    }
    await expect(PostgresStore.open({ connectionString: PG_URL, schema: s })).rejects.toThrow(
      /schema version 999, newer than this AGL/,
    );
  });

  it('stores a 1,200-span batch with in-batch duplicates in multi-row inserts; attributes are queryable JSONB', async () => {
    const s = schema();
    const store = await open(s);
    const r = await store.startRollout({ input: 1 });
    const span = (i: number, attributes: Record<string, string | number>) => ({
      rolloutId: r.rolloutId,
      attemptId: r.attempt.attemptId,
      sequenceId: i,
      traceId: 't',
      spanId: `s-${i}`,
      parentId: null,
      name: i % 2 === 0 ? 'even' : 'odd',
      startTime: i,
      endTime: i + 1,
      attributes,
    });
    const batch = Array.from({ length: 1200 }, (_, i) => span(i, { i, kind: i % 3 === 0 ? 'third' : 'other' }));
    batch.push(span(5, { dup: 1 }), span(1000, { dup: 1 }));
    batch.push(span(5000, { weird: 'nul\u0000inside' }));
    const inserted = await store.addSpans(batch);
    expect(inserted).toHaveLength(1201);
    expect(inserted.find((x) => x.spanId === 's-5')?.attributes).toEqual({ i: 5, kind: 'other' });
    const page = await store.querySpans({ rolloutId: r.rolloutId, name: 'even', limit: 3 });
    expect(page.total).toBe(601);
    expect(page.items.map((x) => x.spanId)).toEqual(['s-0', 's-2', 's-4']);
    expect((await store.querySpans({ rolloutId: r.rolloutId, spanId: 's-5000' })).items[0]?.attributes).toEqual({
      weird: 'nul\u0000inside',
    });
    const raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    try {
      const hits = await raw.query<{ n: string }>(
        `SELECT COUNT(*) AS n FROM "${s}".spans WHERE attributes @> '{"kind":"third"}'`,
      );
      expect(Number(hits.rows[0]!.n)).toBe(400);
      const index = await raw.query(
        `SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'spans_attributes'`,
        [s],
      );
      expect(index.rowCount).toBe(1);
    } finally {
      await raw.end();
    }
    expect(await store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId)).toBe(5001);
  });
});

describe('PostgresStore without a database', () => {
  it('names the URL without its password and the fix when the server is unreachable', async () => {
    const error = await PostgresStore.open({
      connectionString: 'postgres://agl:s3cret@127.0.0.1:1/agl',
      connectTimeoutMs: 2000,
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.name).toBe('AGL_ConnectionError');
    expect(error?.message).toContain('postgres://agl:***@127.0.0.1:1/agl');
    expect(error?.message).not.toContain('s3cret');
    expect(error?.message).toMatch(/start-postgres\.sh|Start PostgreSQL/);
  });

  it('refuses a malformed URL or schema name with a UserError', async () => {
    expect(() => new PostgresStore({ connectionString: 'not a url' })).toThrow(/Invalid PostgreSQL URL/);
    expect(() => new PostgresStore({ connectionString: 'postgres://x@127.0.0.1/db', schema: 'bad-name;' })).toThrow(
      /Invalid PostgreSQL schema name/,
    );
  });
});
