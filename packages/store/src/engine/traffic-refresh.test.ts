import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFeedback, recordRewardSpan, type LightningStore } from '@agl/core/store';
import { findFinalReward, listFeedback } from '@agl/core/transitions';
import { PG_ENABLED, PG_URL, dropSchema, freshSchema } from '../postgres/__fixtures__/pg-test-env';
import { PostgresStore } from '../postgres/index';
import { SqliteStore } from '../sqlite/sqlite-store';
import { encodeTrafficKey, type TrafficRewardRow, type TrafficRows, type TrafficRowsQuery } from './traffic-rows';

const HOUR = 3600;
const HOURS = 12;
const T0 = Date.UTC(2026, 10, 2) / 1000;
const WINDOW = { since: T0, until: T0 + HOURS * HOUR, bucketSeconds: HOUR };
let dir: string;
const schemas: string[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-traffic-refresh-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropSchema(schema);
});

/** A seeded generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type TrafficStore = LightningStore & { queryTraffic(q: TrafficRowsQuery): Promise<TrafficRows | null> };
type Sums = Record<string, { with_feedback: number; feedback_count: number; rewarded: number; reward_sum: number }>;

/** Every kind of annotation the view reads: agent, judge and feedback rewards, the legacy layout, booleans, none. */
async function annotate(store: LightningStore, rolloutId: string, rnd: () => number): Promise<void> {
  const value = Math.round(rnd() * 1000) / 1000 - 0.25;
  const kind = Math.floor(rnd() * 6);
  const primary = { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': value };
  if (kind === 0) await recordRewardSpan(store, rolloutId, primary);
  else if (kind === 1) await recordRewardSpan(store, rolloutId, { ...primary, 'agl.reward.source': 'judge' });
  else if (kind === 2) await recordFeedback(store, rolloutId, value);
  else if (kind === 3) await recordRewardSpan(store, rolloutId, { reward: value });
  else if (kind === 4) await recordRewardSpan(store, rolloutId, { ...primary, 'agentlightning.reward.0.value': true });
  else await recordRewardSpan(store, rolloutId, { 'agl.note': 'no reward here' });
}

/** Random rollouts over the window with random annotations, some retried, failed or moved to another source. */
async function seed(store: LightningStore, rnd: () => number, n: number): Promise<string[]> {
  const ids: string[] = [];
  const sources = ['production', 'unscoped', 'elsewhere', undefined];
  for (let i = 0; i < n; i += 1) {
    const source = sources[Math.floor(rnd() * sources.length)];
    const metadata = { ...(source === undefined ? {} : { source }), agent_name: `bot${Math.floor(rnd() * 3)}` };
    const r = await store.startRollout({
      input: i,
      metadata,
      startTime: T0 + rnd() * HOURS * HOUR,
      ...(rnd() < 0.2 ? { mode: 'train' as const } : {}),
    });
    for (let k = Math.floor(rnd() * 4); k > 0; k -= 1) await annotate(store, r.rolloutId, rnd);
    ids.push(r.rolloutId);
  }
  return ids;
}

/** Later writes: retries (earlier rewards no longer count), late feedback, failures, a source changed. */
async function churn(store: LightningStore, ids: readonly string[], rnd: () => number): Promise<void> {
  for (const id of ids) {
    const u = rnd();
    const failed = (await store.getRolloutById(id))?.status === 'failed';
    if (u < 0.15 && !failed) {
      await store.startAttempt(id);
      if (rnd() < 0.5) await annotate(store, id, rnd);
    } else if (u < 0.3) await recordFeedback(store, id, Math.round(rnd() * 100) / 100);
    else if (u < 0.4 && !failed) {
      const attempt = await store.getLatestAttempt(id);
      await store.updateAttempt(id, attempt!.attemptId, { status: 'failed', endTime: T0 + HOURS * HOUR });
    } else if (u < 0.45) await store.updateRollout(id, { metadata: { source: 'production', agent_name: 'moved' } });
  }
}

/** The sums computed directly: each rollout's latest attempt's spans through `findFinalReward` and `listFeedback`. */
async function directSums(store: LightningStore): Promise<Sums> {
  const out: Sums = {};
  for (const r of (await store.queryRollouts({ limit: -1 })).items) {
    const attempt = await store.getLatestAttempt(r.rolloutId);
    const spans = (await store.querySpans({ rolloutId: r.rolloutId, attemptId: attempt!.attemptId, limit: -1 })).items
      .filter((s) => s.name === 'agentlightning.annotation')
      .sort((a, b) => a.sequenceId - b.sequenceId);
    const reward = findFinalReward(spans);
    const feedback = listFeedback(spans).length;
    if (reward === null && feedback === 0) continue;
    const m = (r.metadata ?? {}) as Record<string, unknown>;
    const key = [
      Math.floor(r.startTime / HOUR),
      r.mode ?? '',
      encodeTrafficKey(m.source),
      encodeTrafficKey(m.agent_name),
      r.status === 'failed' ? 1 : 0,
    ].join('|');
    const acc = (out[key] ??= { with_feedback: 0, feedback_count: 0, rewarded: 0, reward_sum: 0 });
    if (feedback > 0) acc.with_feedback += 1;
    acc.feedback_count += feedback;
    if (reward !== null) {
      acc.rewarded += 1;
      acc.reward_sum += reward;
    }
  }
  return out;
}

/** The sums the reward rollup answers for the whole window (by the hour). */
async function rolledUp(store: TrafficStore): Promise<Sums> {
  const rows = await store.queryTraffic({ ...WINDOW, rewardRollup: true, omit: 'groups' });
  expect(rows?.annotations).toEqual([]);
  const out: Sums = {};
  for (const r of rows!.rewards as TrafficRewardRow[]) {
    const key = [r.hour, r.mode, r.source, r.agent, r.failed === true || r.failed === 1 ? 1 : 0].join('|');
    out[key] = {
      with_feedback: r.with_feedback,
      feedback_count: r.feedback_count,
      rewarded: r.rewarded,
      reward_sum: r.reward_sum,
    };
  }
  return out;
}

/** Rollouts per hour and key, counted directly and as the store's hourly counts answer them. */
async function counts(store: TrafficStore): Promise<[Record<string, number>, Record<string, number>]> {
  const direct: Record<string, number> = {};
  for (const r of (await store.queryRollouts({ limit: -1 })).items) {
    const m = (r.metadata ?? {}) as Record<string, unknown>;
    const key = [
      Math.floor(r.startTime / HOUR),
      r.mode ?? '',
      encodeTrafficKey(m.source),
      encodeTrafficKey(m.agent_name),
      r.status === 'failed' ? 1 : 0,
    ].join('|');
    direct[key] = (direct[key] ?? 0) + 1;
  }
  const rolled: Record<string, number> = {};
  for (const g of (await store.queryTraffic({ ...WINDOW, omit: 'annotations' }))!.groups) {
    const key = [g.hour, g.mode, g.source, g.agent, g.failed === true || g.failed === 1 ? 1 : 0].join('|');
    rolled[key] = (rolled[key] ?? 0) + Number(g.n);
  }
  return [rolled, direct];
}

async function expectExact(store: TrafficStore): Promise<void> {
  const [rolled, direct] = await counts(store);
  expect(rolled).toEqual(direct);
  expectSame(await rolledUp(store), await directSums(store));
}

function expectSame(actual: Sums, expected: Sums): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [key, e] of Object.entries(expected)) {
    const a = actual[key]!;
    expect({ key, ...a, reward_sum: 0 }).toEqual({ key, ...e, reward_sum: 0 });
    expect(a.reward_sum).toBeCloseTo(e.reward_sum, 9);
  }
}

interface Backend {
  open(): Promise<TrafficStore>;
  /** Turns the store's database back into one from before the reward rollup's migration. */
  unmigrate(): Promise<void>;
}

function sqliteBackend(): Backend {
  const path = join(dir, `r-${Math.random().toString(36).slice(2)}.sqlite`);
  return {
    open: async () => new SqliteStore({ path }),
    unmigrate: async () => {
      const db = new Database(path);
      db.exec(`DROP TABLE traffic_reward_hours; DROP TABLE traffic_reward_stale;
               DROP TRIGGER traffic_reward_stale_insert; DROP TRIGGER traffic_reward_stale_delete;
               DROP TRIGGER traffic_reward_stale_update; DROP TRIGGER traffic_reward_stale_attempt;
               DELETE FROM schema_migrations WHERE version >= 5;`);
      db.close();
    },
  };
}

function postgresBackend(): Backend {
  const schema = freshSchema('reward');
  schemas.push(schema);
  return {
    open: async () => PostgresStore.open({ connectionString: PG_URL, schema, poolSize: 2 }),
    unmigrate: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`DROP TABLE "${schema}".traffic_reward_hours; DROP TABLE "${schema}".traffic_reward_stale;
          DROP FUNCTION "${schema}".traffic_reward_mark() CASCADE; DROP TABLE "${schema}".traffic_hours;
          DROP FUNCTION "${schema}".traffic_hours_count() CASCADE;
          DELETE FROM "${schema}".schema_migrations WHERE version >= 4;`);
      } finally {
        await client.end();
      }
    },
  };
}

const backends: Array<[string, () => Backend]> = [['sqlite', sqliteBackend]];
if (PG_ENABLED) backends.push(['postgres', postgresBackend]);

describe.each(backends)('the traffic rollups (%s)', (_name, make) => {
  it('equal a direct computation on random data, through later writes and after a migration', async () => {
    const rnd = random(55);
    const backend = make();
    let store = await backend.open();
    const ids = await seed(store, rnd, 80);
    await expectExact(store);
    // Later writes mark hours stale; the next read recomputes just those.
    await churn(store, ids, rnd);
    await expectExact(store);
    const before = await rolledUp(store);
    await store.close();
    // A database from before the rollup: the migration marks every hour with annotations, the first read fills them.
    await backend.unmigrate();
    store = await backend.open();
    expectSame(await rolledUp(store), before);
    await churn(store, ids, rnd);
    await expectExact(store);
    await store.close();
  }, 120_000);

  it('follows each kind of write alone in its hour: a reward, a retry, feedback, a failure, a new source', async () => {
    const store = await make().open();
    const r = await store.startRollout({ input: 1, metadata: { source: 'production' }, startTime: T0 + 1.5 * HOUR });
    const steps: Array<() => Promise<unknown>> = [
      () =>
        recordRewardSpan(store, r.rolloutId, {
          'agentlightning.reward.0.name': 'primary',
          'agentlightning.reward.0.value': 0.7,
        }),
      () => store.startAttempt(r.rolloutId),
      () => recordFeedback(store, r.rolloutId, 0.25),
      async () => {
        const attempt = await store.getLatestAttempt(r.rolloutId);
        await store.updateAttempt(r.rolloutId, attempt!.attemptId, { status: 'failed', endTime: T0 + 2 * HOUR });
      },
      () => store.updateRollout(r.rolloutId, { metadata: { source: 'unscoped', agent_name: 'x' } }),
    ];
    const seen: number[] = [];
    for (const step of steps) {
      await step();
      const sums = await rolledUp(store);
      expectSame(sums, await directSums(store));
      const [rolled, direct] = await counts(store);
      expect(rolled).toEqual(direct);
      seen.push(Object.keys(sums).length);
    }
    // The retry dropped the reward of the first attempt; feedback brought one back.
    expect(seen).toEqual([1, 0, 1, 1, 1]);
    await store.close();
  }, 60_000);
});
