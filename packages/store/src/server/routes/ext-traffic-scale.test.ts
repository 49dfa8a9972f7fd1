import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFeedback, recordRewardSpan, type LightningStore } from '@agl/core/store';
import { FakeClock } from '@agl/testing';
import { pruneStore } from '../../ops/prune-store';
import { SqliteStore } from '../../sqlite/sqlite-store';
import { createStoreServer } from '../index';

const HOUR = 3600;
const T0 = Date.UTC(2026, 11, 1) / 1000;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-traffic-scale-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `store` with every `queryRollouts` and `querySpans*` call counted (the reads that scale with all rollouts). */
function counting(store: LightningStore): { store: LightningStore; reads: string[] } {
  const reads: string[] = [];
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      if (key === 'queryRollouts' || key === 'querySpans' || key === 'querySpansOfAttempts') reads.push(String(key));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { store: proxy, reads };
}

async function seed(store: LightningStore, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1) {
    const at = T0 + i * 600;
    const r = await store.startRollout({
      input: i,
      metadata: { source: i % 5 === 0 ? 'unscoped' : 'production', agent_name: `bot${i % 2}` },
      startTime: at,
    });
    if (i % 3 === 0)
      await recordRewardSpan(store, r.rolloutId, {
        'agentlightning.reward.0.name': 'primary',
        'agentlightning.reward.0.value': 1,
      });
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, {
      status: i % 4 === 0 ? 'failed' : 'succeeded',
      endTime: at + 1,
    });
    ids.push(r.rolloutId);
  }
  return ids;
}

type Traffic = { total: Record<string, number>; buckets: Array<Record<string, number>> };

describe('live traffic from the database (SQLite)', () => {
  it('answers a poll without reading every rollout or span, and caches it until the next write', async () => {
    const base = new SqliteStore({ path: join(dir, 'reads.sqlite') });
    const ids = await seed(base, 60);
    const { store, reads } = counting(base);
    const clock = new FakeClock(T0 + 12 * HOUR);
    const server = await createStoreServer({ store, port: 0, clock, closeStore: true });
    const poll = async (): Promise<Traffic> =>
      (await (
        await fetch(`${server.url}/v1/agl/ext/traffic?bucket=hour&since=${T0}&until=${T0 + 12 * HOUR}`)
      ).json()) as Traffic;
    try {
      const first = await poll();
      expect(first.total).toMatchObject({ count: 60, failed: 15, rewarded: 20, with_feedback: 0 });
      expect(reads).toEqual([]);
      // Cached: the same answer, even when the rows change behind the server's back (another process)...
      const raw = new Database(join(dir, 'reads.sqlite'));
      raw.prepare("UPDATE rollouts SET status = 'failed' WHERE rollout_id = ?").run(ids[1]);
      raw.close();
      expect((await poll()).total.failed).toBe(15);
      // ...until it ages out,
      clock.advance(11);
      expect((await poll()).total.failed).toBe(16);
      // and at once after a write through the server.
      const feedback = await fetch(`${server.url}/v1/agl/rollouts/${ids[2]}/feedback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ reward: 0.5 }),
      });
      expect(feedback.status).toBeLessThan(300);
      expect((await poll()).total).toMatchObject({ with_feedback: 1, feedback_count: 1, rewarded: 21 });
      expect(reads).toEqual([]);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('keeps the hourly rollup right through status changes, prune and a migration of an older file', async () => {
    const path = join(dir, 'rollup.sqlite');
    const store = new SqliteStore({ path });
    const ids = await seed(store, 24);
    await recordFeedback(store, ids[5]!, 0);
    await store.updateRollout(ids[3]!, { metadata: { source: 'elsewhere' } });
    const before = await store.queryTraffic({ since: T0 - HOUR, until: T0 + 10 * HOUR });
    await store.close();
    const naive = (db: Database.Database) =>
      db
        .prepare(
          `SELECT CAST(start_time AS INTEGER) / 3600 AS hour, status = 'failed' AS failed,
                  json_extract(doc, '$.metadata.source') AS source, COUNT(*) AS n
           FROM rollouts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        )
        .all();
    const rolled = (db: Database.Database) =>
      db
        .prepare(
          `SELECT hour, failed, substr(source, 2) AS source, SUM(n) AS n FROM traffic_hours WHERE n > 0
           GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        )
        .all();
    let db = new Database(path);
    expect(rolled(db)).toEqual(naive(db));
    // A file from before migration 3 (and 4, the releases table, and 5, the reward rollup, which follow it): the rollup
    // is built from its rows.
    db.exec(`DROP TABLE traffic_reward_hours; DROP TABLE traffic_reward_stale; DROP TRIGGER traffic_reward_stale_attempt;
             DROP TABLE traffic_hours; DROP TABLE traffic_annotations;
             DROP TRIGGER traffic_hours_insert; DROP TRIGGER traffic_hours_update; DROP TRIGGER traffic_hours_delete;
             DROP TRIGGER traffic_annotations_insert; DROP TRIGGER traffic_annotations_delete;
             DROP TRIGGER traffic_annotations_keys; DROP TRIGGER traffic_annotations_attempt;
             DROP TRIGGER traffic_annotations_delete_rollout;
             DROP TABLE releases;
             DELETE FROM schema_migrations WHERE version >= 3;`);
    db.close();
    const reopened = new SqliteStore({ path });
    expect(await reopened.queryTraffic({ since: T0 - HOUR, until: T0 + 10 * HOUR })).toEqual(before);
    await reopened.close();
    await pruneStore({ db: path, keepLast: 10 });
    db = new Database(path);
    expect(rolled(db)).toEqual(naive(db));
    expect((db.prepare('SELECT COUNT(*) AS n FROM traffic_annotations').get() as { n: number }).n).toBe(
      (
        db
          .prepare(`SELECT COUNT(*) AS n FROM spans WHERE json_extract(doc, '$.name') = 'agentlightning.annotation'`)
          .get() as { n: number }
      ).n,
    );
    db.close();
  }, 60_000);
});
