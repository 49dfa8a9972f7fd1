import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFeedback, recordRewardSpan, type LightningStore } from '@agl/core/store';
import { MemoryStore } from '../../memory/memory-store';
import { PG_ENABLED, PG_URL, dropSchema, freshSchema } from '../../postgres/__fixtures__/pg-test-env';
import { PostgresStore } from '../../postgres/index';
import { SqliteStore } from '../../sqlite/sqlite-store';
import { createStoreServer, type StoreServer } from '../index';

const TOKEN = 'traffic-token';
const HOUR = 3600;
/** 2026-12-01T00:00:00Z: the seeded traffic starts here. */
const T0 = Date.UTC(2026, 11, 1) / 1000;
let dir: string;
const schemas: string[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-traffic-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropSchema(schema);
});

type Body = Record<string, unknown> & {
  items: Array<Record<string, unknown>>;
  buckets: Array<Record<string, unknown>>;
};

/**
 * Live traffic over three hours: hour 0 has 3 production rollouts of agent "bot" (one failed; rewards 1 by the agent,
 * 0 by the agent then feedback 1, none), hour 2 has 1 of agent "other" with feedback 0.5 and one "unscoped" call; plus
 * a training rollout in hour 0 (mode train).
 */
async function seed(store: LightningStore): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const live = async (
    name: string,
    at: number,
    metadata: Record<string, string>,
    outcome: { status?: 'succeeded' | 'failed'; reward?: number; feedback?: number; mode?: 'train' } = {},
  ) => {
    const r = await store.startRollout({
      input: name,
      mode: outcome.mode ?? null,
      metadata,
      rolloutId: `ro-${name}`,
      attemptId: `at-${name}`,
      startTime: at,
    });
    if (outcome.reward !== undefined)
      await recordRewardSpan(store, r.rolloutId, {
        'agentlightning.reward.0.name': 'primary',
        'agentlightning.reward.0.value': outcome.reward,
      });
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, {
      status: outcome.status ?? 'succeeded',
      endTime: at + 1,
    });
    if (outcome.feedback !== undefined) await recordFeedback(store, r.rolloutId, outcome.feedback, { comment: 'late' });
    ids[name] = r.rolloutId;
  };
  const prod = { source: 'production', agent_name: 'bot' };
  await live('a', T0 + 60, prod, { reward: 1 });
  await live('b', T0 + 120, prod, { reward: 0, feedback: 1 });
  await live('c', T0 + 180, prod, { status: 'failed' });
  await live('d', T0 + 2 * HOUR + 5, { source: 'production', agent_name: 'other' }, { feedback: 0.5 });
  await live('e', T0 + 2 * HOUR + 10, { source: 'unscoped' });
  await live('t', T0 + 30, {}, { mode: 'train', reward: 0.25 });
  return ids;
}

const backends: Array<[string, () => Promise<LightningStore>]> = [
  ['memory', async () => new MemoryStore()],
  ['sqlite', async () => new SqliteStore({ path: join(dir, `t-${Math.random().toString(36).slice(2)}.sqlite`) })],
];
if (PG_ENABLED)
  backends.push([
    'postgres',
    async () => {
      const schema = freshSchema('traffic');
      schemas.push(schema);
      return PostgresStore.open({ connectionString: PG_URL, schema, poolSize: 4 });
    },
  ]);

describe.each(backends)('live traffic routes (%s store)', (_name, makeStore) => {
  let store: LightningStore;
  let server: StoreServer;
  let ids: Record<string, string>;
  const get = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as Body };
  };
  const window = `since=${T0}&until=${T0 + 3 * HOUR}`;

  beforeAll(async () => {
    store = await makeStore();
    ids = await seed(store);
    server = await createStoreServer({ store, port: 0, token: TOKEN });
  });
  afterAll(async () => {
    await server.close();
    await store.close();
  });

  it('counts rollouts, failures, feedback and the mean final reward per hour', async () => {
    const res = await get(`/v1/agl/ext/traffic?bucket=hour&mode=none&${window}`);
    expect(res.status).toBe(200);
    expect(res.body.buckets).toEqual([
      // a: 1, b: feedback 1 wins over the agent's 0; c has none.
      {
        start: T0,
        count: 3,
        failed: 1,
        failure_rate: 1 / 3,
        with_feedback: 1,
        feedback_count: 1,
        rewarded: 2,
        mean_reward: 1,
      },
      {
        start: T0 + HOUR,
        count: 0,
        failed: 0,
        failure_rate: null,
        with_feedback: 0,
        feedback_count: 0,
        rewarded: 0,
        mean_reward: null,
      },
      {
        start: T0 + 2 * HOUR,
        count: 2,
        failed: 0,
        failure_rate: 0,
        with_feedback: 1,
        feedback_count: 1,
        rewarded: 1,
        mean_reward: 0.5,
      },
    ]);
    expect(res.body).toMatchObject({
      sources: ['production', 'unscoped'],
      agents: ['bot', 'other'],
      total: { count: 5 },
    });
    const daily = await get(`/v1/agl/ext/traffic?bucket=day&scope=all&${window}`);
    expect(daily.body.buckets).toEqual([
      expect.objectContaining({ start: T0, count: 6, rewarded: 4, mean_reward: (1 + 1 + 0.5 + 0.25) / 4 }),
    ]);
    expect(daily.body.scope).toBe('all');
  });

  it('counts production sources by default (the training rollout only with scope=all or a mode)', async () => {
    const byDefault = await get(`/v1/agl/ext/traffic?bucket=day&${window}`);
    expect(byDefault.body).toMatchObject({ scope: 'production', total: { count: 5, rewarded: 3 } });
    expect((await get(`/v1/agl/ext/traffic?bucket=day&scope=all&${window}`)).body.total).toMatchObject({ count: 6 });
    expect((await get(`/v1/agl/ext/traffic?bucket=day&mode=train&${window}`)).body).toMatchObject({
      scope: 'all',
      total: { count: 1, mean_reward: 0.25 },
    });
    // The rollout list narrows the same way when asked.
    const listed = await get('/v1/agl/ext/rollouts?scope=production&sort_by=start_time&sort_order=asc');
    expect(listed.body.items.map((r) => r.rollout_id)).toEqual([ids.a, ids.b, ids.c, ids.d, ids.e]);
  });

  it('without since, starts the window at the span of the data when that is shorter than the default', async () => {
    // The server's clock is the system clock: the data (hours 0-2 after T0) is older than 7 days only after
    // 2026-12-08, so the window is pinned by `until` instead.
    const until = T0 + 5 * HOUR + 600;
    const res = await get(`/v1/agl/ext/traffic?bucket=hour&until=${until}`);
    expect(res.body).toMatchObject({ since: T0, until, fitted: true, total: { count: 5 } });
    expect((res.body.buckets as unknown[]).length).toBe(6);
    const daily = await get(`/v1/agl/ext/traffic?bucket=day&until=${until}`);
    expect(daily.body).toMatchObject({ since: T0, fitted: true });
    expect((daily.body.buckets as unknown[]).length).toBe(1);
    // A pinned since is kept as asked.
    const pinned = await get(`/v1/agl/ext/traffic?bucket=hour&since=${T0 - 10 * HOUR}&until=${until}`);
    expect(pinned.body).toMatchObject({ since: T0 - 10 * HOUR, fitted: false });
    expect((pinned.body.buckets as unknown[]).length).toBe(16);
  });

  it('filters the chart and the rollout list by source, agent, feedback, reward and time', async () => {
    const counts = async (query: string) =>
      ((await get(`/v1/agl/ext/traffic?bucket=day&${window}&${query}`)).body.total as { count: number }).count;
    const listed = async (query: string) =>
      (await get(`/v1/agl/ext/rollouts?sort_by=start_time&sort_order=asc&${query}`)).body.items.map(
        (r) => r.rollout_id,
      );
    expect(await counts('source=production')).toBe(4);
    expect(await counts('agent=bot')).toBe(3);
    expect(await counts('feedback=with')).toBe(2);
    expect(await counts('feedback=without&mode=none')).toBe(3);
    expect(await counts('min_reward=0.5&max_reward=0.9')).toBe(1);
    expect(await listed('source=production&agent=bot')).toEqual([ids.a, ids.b, ids.c]);
    expect(await listed('feedback=with')).toEqual([ids.b, ids.d]);
    expect(await listed('min_reward=1')).toEqual([ids.a, ids.b]);
    expect(await listed('mode_in=none&feedback=without')).toEqual([ids.a, ids.c, ids.e]);
    expect(await listed(`since=${T0 + HOUR}&until=${new Date((T0 + 3 * HOUR) * 1000).toISOString()}`)).toEqual([
      ids.d,
      ids.e,
    ]);
    expect((await get('/v1/agl/ext/rollouts?mode_in=none')).body.total).toBe(5);
  });

  it('answers reward series for rollouts without a mode too', async () => {
    const res = await get('/v1/agl/ext/rewards?mode_in=none');
    expect((res.body.points as unknown[]).length).toBe(5);
    expect(res.body.overall).toMatchObject({ none: { count: 3, mean: (1 + 1 + 0.5) / 3 } });
  });

  it('refuses a bad bucket, reward or window with the field named', async () => {
    expect((await get('/v1/agl/ext/traffic?bucket=week')).body.detail).toMatch(/bucket/);
    expect((await get('/v1/agl/ext/traffic?min_reward=high')).body.detail).toMatch(/min_reward/);
    expect((await get(`/v1/agl/ext/traffic?since=${T0}&until=${T0 - 1}`)).status).toBe(400);
    const wide = await get(`/v1/agl/ext/traffic?bucket=hour&since=0&until=${T0}`);
    expect(wide.status).toBe(400);
    expect(wide.body.detail).toMatch(/bucket=day/);
  });
});

describe('live traffic route cost', () => {
  it('summarises 3,000 rollouts of a SQLite store by the hour within the budget', async () => {
    const store = new SqliteStore({ path: join(dir, 'many.sqlite') });
    const n = 3000;
    for (let i = 0; i < n; i += 1) {
      const at = T0 + i * 30;
      const r = await store.startRollout({ input: i, metadata: { source: 'production' }, startTime: at });
      if (i % 3 === 0)
        await recordRewardSpan(store, r.rolloutId, {
          'agentlightning.reward.0.name': 'primary',
          'agentlightning.reward.0.value': 1,
        });
      await store.updateAttempt(r.rolloutId, r.attempt.attemptId, {
        status: i % 10 === 0 ? 'failed' : 'succeeded',
        endTime: at + 1,
      });
    }
    const server = await createStoreServer({ store, port: 0, closeStore: true });
    try {
      const url = `${server.url}/v1/agl/ext/traffic?bucket=hour&since=${T0}&until=${T0 + n * 30}`;
      const timed = async () => {
        const began = performance.now();
        const body = (await (await fetch(url)).json()) as {
          total: { count: number; failed: number; rewarded: number };
        };
        return { body, ms: performance.now() - began };
      };
      const cold = await timed();
      expect(cold.body.total).toMatchObject({ count: n, failed: n / 10, rewarded: n / 3 });
      const warm = await timed();
      expect(warm.body.total.count).toBe(n);
      process.stderr.write(`[traffic] ${n} rollouts: cold ${cold.ms.toFixed(0)} ms, cached ${warm.ms.toFixed(0)} ms\n`);
      expect(warm.ms).toBeLessThan(1000);
    } finally {
      await server.close();
    }
  }, 120_000);
});
