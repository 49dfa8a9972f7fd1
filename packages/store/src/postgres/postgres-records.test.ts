import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { applyRecords } from '@agl/core/store';
import { BATCHES, clock, contents } from '../__fixtures__/recorder-batches';
import { testSpan } from '../__fixtures__/test-records';
import { ingestOtlpSpans } from '../otlp/ingest-otlp';
import { PG_ENABLED, PG_URL, dropSchema, freshSchema } from './__fixtures__/pg-test-env';
import { PostgresStore } from './index';

/** Counts the statements every PostgreSQL client sends until `stop()` (BEGIN and COMMIT included). */
function countStatements(): { count: () => number; stop: () => void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let count = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    count += 1;
    return original.apply(this, args);
  };
  return { count: () => count, stop: () => (proto.query = original) };
}

// The records batch and OTLP ingest on PostgreSQL: one transaction a request, multi-row writes, and the same stored
// state as the records applied one by one.
describe.runIf(PG_ENABLED)('PostgresStore: recorder batches and OTLP ingest', () => {
  const opened: PostgresStore[] = [];
  const schemas: string[] = [];
  const open = async (): Promise<PostgresStore> => {
    const schema = freshSchema('records');
    schemas.push(schema);
    const store = await PostgresStore.open({ connectionString: PG_URL, schema, poolSize: 4, clock });
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const name of schemas.splice(0)) await dropSchema(name);
  });

  it('leaves the database as the records applied one by one do', async () => {
    const batched = await open();
    const single = await open();
    for (const batch of [...BATCHES, BATCHES[0]!]) {
      expect(await batched.applyProductionRecords(batch)).toEqual({ applied: batch.length, rejected: [] });
      expect(await applyRecords(single, batch)).toEqual({ applied: batch.length, rejected: [] });
    }
    expect(await contents(batched)).toEqual(await contents(single));
    // The same counts and annotations (in rollout order: spans of a rollout the batch starts are written at its end,
    // and applyRecords runs rollouts side by side); `deltaRows` (count rows not yet compacted) is fewer: fewer writes.
    const traffic = async (store: PostgresStore): Promise<unknown> => {
      const rows = await store.queryTraffic({ since: 1_699_990_000, until: 1_700_010_000 });
      const annotations = [...(rows?.annotations ?? [])].sort((a, b) => (a.rollout_id < b.rollout_id ? -1 : 1));
      return { ...rows, annotations, deltaRows: undefined };
    };
    expect(await traffic(batched)).toEqual(await traffic(single));
  });

  it('a batch of 50 whole requests is a handful of statements, not several per record', async () => {
    const store = await open();
    await store.queryRollouts({}); // the first watched call's watchdog scan, out of the way
    const statements = countStatements();
    const records = Array.from({ length: 50 }, (_, i) => [
      { kind: 'start', rolloutId: `ro-n${i}`, attemptId: `at-n${i}`, input: i, startTime: 1_700_000_000 + i },
      {
        kind: 'spans',
        spans: [testSpan(`ro-n${i}`, `at-n${i}`, { startTime: 1_700_000_001, endTime: 1_700_000_002 })],
      },
      { kind: 'end', rolloutId: `ro-n${i}`, attemptId: `at-n${i}`, status: 'succeeded', endTime: 1_700_000_003 + i },
    ]).flat();
    try {
      expect(await store.applyProductionRecords(records)).toEqual({ applied: 150, rejected: [] });
    } finally {
      statements.stop();
    }
    // BEGIN, the rollouts read, the resources id, one insert each for rollouts, attempts, counters and spans, the
    // change notices, COMMIT: about ten, where each storage call was one (13 a request) before.
    expect(statements.count()).toBeLessThanOrEqual(15);
    expect((await store.queryRollouts({ statusIn: ['succeeded'] })).total).toBe(50);
    expect((await store.querySpans({ rolloutId: 'ro-n49' })).total).toBe(1);
  });

  it('OTLP ingest stores a request in one transaction, unknown owners reported', async () => {
    const store = await open();
    const a = await store.startRollout({ input: 1 });
    const spans = [null, 4, null].map((sequenceId, i) => ({
      sequenceId,
      span: testSpan(a.rolloutId, a.attempt.attemptId, { spanId: `s${i}`, sequenceId: sequenceId ?? 0 }),
    }));
    spans.push({ sequenceId: 1, span: testSpan('ro-missing', 'at-x', { spanId: 'sx' }) });
    const result = await ingestOtlpSpans(store, { spans, unowned: [] });
    expect(result).toMatchObject({ accepted: 3, duplicates: 0, rejected: 1 });
    const stored = await store.querySpans({ rolloutId: a.rolloutId });
    expect(stored.items.map((s) => [s.spanId, s.sequenceId])).toEqual([
      ['s0', 1],
      ['s2', 2],
      ['s1', 4],
    ]);
    expect((await store.getLatestAttempt(a.rolloutId))?.status).toBe('running');
  });
});
