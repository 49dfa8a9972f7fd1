import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '@agl/core/errors';
import type { LightningStore } from '@agl/core/store';
import { StoreClient } from '../../client/index';
import { MemoryStore } from '../../memory/memory-store';
import { SqliteStore } from '../../sqlite/sqlite-store';
import { createStoreServer, type StoreServer } from '../index';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-rollout-spans-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TOKEN = 'tok-rollout-spans';
const span = (rolloutId: string, attemptId: string, sequenceId: number, name: string) => ({
  rolloutId,
  attemptId,
  sequenceId,
  traceId: 'trace',
  spanId: `${attemptId}-${sequenceId}`,
  parentId: null,
  name,
  status: { statusCode: 'OK' as const, description: null },
  attributes: { step: sequenceId },
  events: [],
  links: [],
  startTime: 1,
  endTime: 2,
  context: null,
  parent: null,
  resource: { attributes: {}, schemaUrl: '' },
});

describe.each([
  ['memory', (): LightningStore => new MemoryStore()],
  ['sqlite', (): LightningStore => new SqliteStore({ path: join(dir, `${Math.random()}.sqlite`) })],
])('GET /v1/agl/rollouts/{rollout_id}/spans (%s store)', (_name, makeStore) => {
  let store: LightningStore;
  let server: StoreServer;
  let client: StoreClient;
  let rolloutId: string;
  let first: string;
  let second: string;
  let other: string;

  beforeAll(async () => {
    store = makeStore();
    server = await createStoreServer({ store, port: 0, token: TOKEN, closeStore: true });
    client = new StoreClient({ url: server.url, token: TOKEN, retryDelays: [] });
    const rollout = await store.startRollout({ input: 'q', config: { maxAttempts: 2, retryCondition: ['failed'] } });
    rolloutId = rollout.rolloutId;
    first = rollout.attempt.attemptId;
    await store.updateAttempt(rolloutId, first, { status: 'failed' });
    second = (await store.startAttempt(rolloutId)).attempt.attemptId;
    const another = await store.startRollout({ input: 'other' });
    other = another.rolloutId;
    await store.addSpans([
      span(rolloutId, first, 1, 'a1'),
      span(rolloutId, first, 2, 'a2'),
      span(rolloutId, second, 3, 'b1'),
      span(another.rolloutId, another.attempt.attemptId, 1, 'elsewhere'),
    ]);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  type Page = {
    items: Array<{ name: string } & Record<string, unknown>>;
    total: number;
    limit: number;
    offset: number;
  };
  const page = async (path: string): Promise<Page> => (await (await get(path)).json()) as Page;
  const get = (path: string, token: string | null = TOKEN): Promise<Response> =>
    fetch(`${server.url}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });

  it("answers the rollout's spans of every attempt in sequence order, in wire form, and no other rollout's", async () => {
    const response = await get(`/v1/agl/rollouts/${rolloutId}/spans`);
    expect(response.status).toBe(200);
    const all = (await response.json()) as Page;
    expect(all.total).toBe(3);
    expect(all.items.map((s) => s.name)).toEqual(['a1', 'a2', 'b1']);
    expect(all.items[0]).toMatchObject({ rollout_id: rolloutId, attempt_id: first, sequence_id: 1 });
    expect((await page(`/v1/agl/rollouts/${other}/spans`)).total).toBe(1);
  });

  it('filters by attempt (an id, or latest), pages and sorts like the span query', async () => {
    const one = await page(`/v1/agl/rollouts/${rolloutId}/spans?attempt_id=${first}`);
    expect(one.items.map((s) => s.name)).toEqual(['a1', 'a2']);
    const latest = await page(`/v1/agl/rollouts/${rolloutId}/spans?attempt_id=latest`);
    expect(latest.items.map((s) => s.name)).toEqual(['b1']);
    const paged = await page(`/v1/agl/rollouts/${rolloutId}/spans?limit=1&offset=1&sort_order=desc`);
    expect(paged).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(paged.items.map((s) => s.name)).toEqual(['a2']);
  });

  it('is a 404 naming an unknown rollout, a 400 naming a bad page field, a 401 without the token', async () => {
    const missing = await get('/v1/agl/rollouts/ro-nope/spans');
    expect(missing.status).toBe(404);
    expect((await missing.json()) as unknown).toMatchObject({ detail: expect.stringContaining('"ro-nope"') });
    const bad = await get(`/v1/agl/rollouts/${rolloutId}/spans?limit=0`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/limit/i);
    expect((await get(`/v1/agl/rollouts/${rolloutId}/spans`, null)).status).toBe(401);
  });

  it('StoreClient.getRolloutSpans reads it, and throws NotFoundError for an unknown rollout', async () => {
    const all = await client.getRolloutSpans(rolloutId);
    expect(all.items.map((s) => s.name)).toEqual(['a1', 'a2', 'b1']);
    expect(all.items[2]).toMatchObject({ attemptId: second, attributes: { step: 3 } });
    expect((await client.getRolloutSpans(rolloutId, { attemptId: 'latest' })).items.map((s) => s.name)).toEqual(['b1']);
    const page = await client.getRolloutSpans(rolloutId, { limit: 2, sortOrder: 'desc' });
    expect(page.items.map((s) => s.name)).toEqual(['b1', 'a2']);
    expect(page.total).toBe(3);
    await expect(client.getRolloutSpans('ro-nope')).rejects.toSatisfy(
      (error: unknown) => NotFoundError.isInstance(error) && /ro-nope/.test((error as Error).message),
    );
  });
});
