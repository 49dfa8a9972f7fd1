import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightningStore } from '@agl/core/store';
import { REWARD_PRIMARY_NAME, SPAN_ANNOTATION, rewardNameKey, rewardValueKey } from '@agl/core/semconv';
import { MemoryStore } from '../../memory/memory-store';
import { SqliteStore } from '../../sqlite/sqlite-store';
import { createStoreServer, type StoreServer } from '../index';

const TOKEN = 'ext-token';
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-ext-routes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Fills a store: 2 resources versions, 6 finished rollouts with known rewards, 1 queued, 1 retried. */
async function fill(store: LightningStore): Promise<{ rewards: Map<string, number | null> }> {
  const v1 = await store.addResources({
    prompt: { resourceType: 'prompt_template', template: 'v1 {q}', engine: 'f-string' },
    llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:1/v1', model: 'm', apiKey: 'sk-secret-key-123456' },
  });
  const rewards = new Map<string, number | null>();
  const finish = async (resourcesId: string, mode: 'train' | 'val', reward: number | null, worker: string) => {
    const r = await store.startRollout({ input: { q: reward }, mode, resourcesId, workerId: worker });
    let seq = 0;
    const span = (name: string, attributes: Record<string, string | number>) => ({
      rolloutId: r.rolloutId,
      attemptId: r.attempt.attemptId,
      sequenceId: seq++,
      traceId: 't'.repeat(32),
      spanId: `s${seq}`.padStart(16, '0'),
      parentId: null,
      name,
      attributes,
      startTime: r.startTime,
      endTime: r.startTime + 1,
    });
    await store.addSpans([
      span('openai.chat.completion', { 'gen_ai.usage.input_tokens': 3 }),
      ...(reward === null
        ? []
        : [span(SPAN_ANNOTATION, { [rewardNameKey(0)]: REWARD_PRIMARY_NAME, [rewardValueKey(0)]: reward })]),
    ]);
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    rewards.set(r.rolloutId, reward);
    return r;
  };
  await finish(v1.resourcesId, 'train', 0.2, 'Worker-0');
  await finish(v1.resourcesId, 'train', 0.4, 'Worker-1');
  await finish(v1.resourcesId, 'val', 0, 'Worker-0');
  const v2 = await store.addResources({
    prompt: { resourceType: 'prompt_template', template: 'v2 better {q}', engine: 'f-string' },
  });
  await finish(v2.resourcesId, 'train', 1, 'Worker-1');
  await finish(v2.resourcesId, 'val', 1, 'Worker-0');
  await finish(v2.resourcesId, 'val', null, 'Worker-1');
  // A retried rollout: 2 attempts, the first failed.
  const retried = await store.startRollout({
    input: 'retry',
    mode: 'train',
    config: { maxAttempts: 2, retryCondition: ['failed'] },
  });
  await store.updateAttempt(retried.rolloutId, retried.attempt.attemptId, { status: 'failed' });
  await store.startAttempt(retried.rolloutId);
  await store.enqueueRollout({ input: 'waiting', mode: 'train' });
  return { rewards };
}

const backends: Array<[string, () => LightningStore]> = [
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: join(dir, `ext-${Math.random().toString(36).slice(2)}.sqlite`) })],
];

describe.each(backends)('ext routes over HTTP (%s store)', (_name, makeStore) => {
  let store: LightningStore;
  let server: StoreServer;
  let rewards: Map<string, number | null>;
  const get = async (path: string, token: string | null = TOKEN) => {
    const res = await fetch(`${server.url}${path}`, {
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { items: Array<Record<string, unknown>> },
    };
  };

  beforeAll(async () => {
    store = makeStore();
    ({ rewards } = await fill(store));
    server = await createStoreServer({ store, port: 0, token: TOKEN, storeLabel: '.agl/store.sqlite' });
  });
  afterAll(async () => {
    await server.close();
    await store.close();
  });

  it('requires the token like every API route', async () => {
    const res = await get('/v1/agl/ext/rollouts', null);
    expect(res.status).toBe(401);
    expect(res.body.error_type).toBe('AGL_AuthenticationError');
  });

  it('says which store it serves (GET /ext/info, behind the token)', async () => {
    expect((await get('/v1/agl/ext/info', null)).status).toBe(401);
    expect(await get('/v1/agl/ext/info')).toEqual({ status: 200, body: { store: '.agl/store.sqlite' } });
  });

  it('joins rollouts with final reward, attempt count, duration and worker; total counts every match', async () => {
    const res = await get('/v1/agl/ext/rollouts?limit=3&sort_by=start_time&sort_order=asc');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(8);
    expect(res.body.items).toHaveLength(3);
    const first = res.body.items[0]!;
    expect(first.final_reward).toBe(rewards.get(first.rollout_id as string));
    expect(first.attempt_count).toBe(1);
    expect(first.worker_id).toBe('Worker-0');
    expect(typeof first.duration).toBe('number');
    expect(first.attempt).toMatchObject({ status: 'succeeded' });
  });

  it('sorts by reward on the server (nulls last) and pages', async () => {
    const desc = await get('/v1/agl/ext/rollouts?sort_by=reward&sort_order=desc&limit=100');
    const values = desc.body.items.map((i) => i.final_reward);
    expect(values.slice(0, 5)).toEqual([1, 1, 0.4, 0.2, 0]);
    expect(values.slice(5)).toEqual([null, null, null]);
    const page2 = await get('/v1/agl/ext/rollouts?sort_by=reward&sort_order=desc&limit=2&offset=2');
    expect(page2.body.items.map((i) => i.final_reward)).toEqual([0.4, 0.2]);
    expect(page2.body.total).toBe(8);
  });

  it('sorts by attempts and filters by status, mode and worker', async () => {
    const byAttempts = await get('/v1/agl/ext/rollouts?sort_by=attempts&sort_order=desc&limit=1');
    expect(byAttempts.body.items[0]!.attempt_count).toBe(2);
    const val = await get('/v1/agl/ext/rollouts?mode_in=val&status_in=succeeded');
    expect(val.body.total).toBe(3);
    const worker = await get('/v1/agl/ext/rollouts?worker_id_contains=Worker-1');
    expect(worker.body.total).toBe(3);
    expect(worker.body.items.every((i) => i.worker_id === 'Worker-1')).toBe(true);
  });

  it('rejects a bad sort column or limit with a 4xx naming the field', async () => {
    const bad = await get('/v1/agl/ext/rollouts?sort_by=nope');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toContain('sort_by');
    const big = await get('/v1/agl/ext/rollouts?limit=5000');
    expect(big.status).toBe(400);
    expect(big.body.detail).toContain('limit');
  });

  it('returns one rollout with its attempts and span counts', async () => {
    const list = await get('/v1/agl/ext/rollouts?sort_by=attempts&sort_order=desc&limit=1');
    const id = list.body.items[0]!.rollout_id as string;
    const detail = await get(`/v1/agl/ext/rollouts/${id}`);
    const attempts = detail.body.attempts as Array<Record<string, unknown>>;
    expect(attempts.map((a) => a.sequence_id)).toEqual([1, 2]);
    expect(attempts[0]!.status).toBe('failed');
    expect(attempts.every((a) => a.span_count === 0)).toBe(true);
    const rewarded = [...rewards.entries()].find(([, r]) => r === 0.4)![0];
    const one = await get(`/v1/agl/ext/rollouts/${rewarded}`);
    expect(one.body.final_reward).toBe(0.4);
    expect((one.body.attempts as Array<Record<string, unknown>>)[0]!.span_count).toBe(2);
    expect((await get('/v1/agl/ext/rollouts/ro-missing')).body).toBeNull();
  });

  it('serves reward points and per-version statistics per mode', async () => {
    const res = await get('/v1/agl/ext/rewards?success_threshold=0.5');
    expect(res.status).toBe(200);
    const points = res.body.points as Array<Record<string, unknown>>;
    expect(points).toHaveLength(6); // the retried rollout still runs
    const versions = res.body.by_resources as Array<{ version: number; modes: Record<string, Record<string, number>> }>;
    expect(versions).toHaveLength(2);
    expect(versions[0]!.modes.train).toMatchObject({ count: 2, success_rate: 0 });
    expect(versions[0]!.modes.train!.mean).toBeCloseTo(0.3);
    expect(versions[1]!.modes.val).toMatchObject({ count: 1, mean: 1, success_rate: 1 });
    expect((res.body.overall as Record<string, Record<string, number>>).val).toMatchObject({
      finished: 3,
      succeeded: 3,
    });
  });

  it('lists every resources version with reward stats and masked API keys', async () => {
    const res = await get('/v1/agl/ext/resources');
    expect(res.body.total).toBe(2);
    const [v1, v2] = res.body.items;
    const llm = (v1!.resources as Record<string, Record<string, unknown>>).llm!;
    expect(llm.api_key).toBe('••••3456');
    expect(JSON.stringify(res.body)).not.toContain('sk-secret-key');
    expect(v2!.is_latest).toBe(true);
    expect((v2!.rewards as Record<string, Record<string, number>>).train).toMatchObject({ count: 1, mean: 1 });
  });
});
