import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer, type StoreServerOptions } from '../server/index';
import { StoreClient } from '@agl/client';

type Reply =
  { status: number; body?: unknown; headers?: Record<string, string> } | 'destroy' | { delayMs: number; then: Reply };
interface Seen {
  method: string;
  path: string;
  body: unknown;
  headers: IncomingMessage['headers'];
}

/** A real HTTP server on 127.0.0.1 that answers from a script, per path; records every request. */
async function scriptedServer(
  script: Record<string, Reply[]>,
  fallback: Reply = { status: 200, body: { status: 'ok' } },
) {
  const seen: Seen[] = [];
  const answer = (res: ServerResponse, reply: Reply): void => {
    if (reply === 'destroy') {
      res.socket?.destroy();
      return;
    }
    if ('delayMs' in reply) {
      setTimeout(() => answer(res, reply.then), reply.delayMs);
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      seen.push({
        method: req.method ?? '',
        path,
        body: raw === '' ? undefined : JSON.parse(raw),
        headers: req.headers,
      });
      answer(res, script[path]?.shift() ?? fallback);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const count = (path: string) => seen.filter((s) => s.path === path).length;
  return { url, seen, count, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

/** A real store server on `store` (closed after the test). */
async function serve(
  store: LightningStore,
  options: Omit<StoreServerOptions, 'store' | 'port'> = {},
): Promise<StoreServer> {
  const server = await createStoreServer({ store, port: 0, ...options });
  closers.push(
    () => store.close(),
    () => server.close(),
  );
  return server;
}

function client(url: string, extra: Partial<ConstructorParameters<typeof StoreClient>[0]> = {}) {
  const slept: number[] = [];
  const c = new StoreClient({ url, sleep: async (ms) => void slept.push(ms), ...extra });
  closers.push(() => c.close());
  return { c, slept };
}

const STATS = '/v1/agl/statistics';
const HEALTH = '/v1/agl/health';
const stats = {
  name: 'X',
  total_rollouts: 0,
  total_attempts: 0,
  total_spans: 0,
  total_resources: 0,
  total_workers: 0,
  uptime: 1,
};

describe('StoreClient retry contract (reference v0 §3.5, checklist 33-34 with our 4xx policy)', () => {
  it('a store fault is a 500 and is attempted 4 times with 1, 2, 5 s backoff before raising', async () => {
    const backing = new MemoryStore();
    let calls = 0;
    const failing = new Proxy(backing, {
      get(target, key, receiver) {
        if (key === 'statistics')
          return async () => {
            calls += 1;
            throw new Error('disk on fire');
          };
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as LightningStore;
    const server = await createStoreServer({ store: failing, port: 0 });
    closers.push(
      () => backing.close(),
      () => server.close(),
    );
    const { c, slept } = client(server.url);
    const error = await c.statistics().catch((e: unknown) => e as Error & { status?: number });
    expect(error.name).toBe('AGL_HttpError');
    expect(error.status).toBe(500);
    expect(error.message).toMatch(/disk on fire/);
    expect(calls).toBe(4);
    expect(slept.filter((ms) => ms >= 1000)).toEqual([1000, 2000, 5000]);
  });

  it('a 4xx other than 408 is raised after one call, typed', async () => {
    const s = await scriptedServer({
      '/v1/agl/rollouts/ro-x': [
        {
          status: 404,
          body: { detail: 'Rollout ro-x not found', error_type: 'AGL_NotFoundError', entity: 'rollout', id: 'ro-x' },
        },
      ],
    });
    closers.push(s.close);
    const { c } = client(s.url);
    const error = (await c.updateRollout('ro-x', { status: 'failed' }).then(
      () => new Error('no error'),
      (e: unknown) => e,
    )) as Error & { entity?: string };
    expect(error.name).toBe('AGL_NotFoundError');
    expect(error.entity).toBe('rollout');
    expect(s.count('/v1/agl/rollouts/ro-x')).toBe(1);
  });

  for (const [label, first] of [
    ['a dropped connection', 'destroy'],
    ['a 500', { status: 500, body: { detail: 'boom', error_type: 'AGL_InternalError' } }],
    ['a 408', { status: 408, body: { detail: 'slow', error_type: 'AGL_TimeoutError' } }],
    ['a response slower than the request timeout', { delayMs: 1500, then: { status: 200, body: stats } }],
  ] as const) {
    it(`${label} followed by success returns normally`, async () => {
      const s = await scriptedServer({ [STATS]: [first as Reply, { status: 200, body: stats }] });
      closers.push(s.close);
      const { c } = client(s.url, { requestTimeoutMs: 300 });
      expect((await c.statistics()).name).toBe('X');
      expect(s.count(STATS)).toBe(2);
      expect(s.count(HEALTH)).toBe(1);
    });
  }

  it('applyRecords retries a 503 like any call, and tries once with retry: false (the recorder keeps its own queue)', async () => {
    const RECORDS = '/v1/agl/records';
    const down = { status: 503, body: { detail: 'down', error_type: 'AGL_InternalError' } } as const;
    const applied = { status: 200, body: { applied: 0, rejected: [] } } as const;
    const s = await scriptedServer({ [RECORDS]: [down, applied, down] });
    closers.push(s.close);
    const { c } = client(s.url);
    expect(await c.applyRecords([])).toEqual({ applied: 0, rejected: [] });
    expect(s.count(RECORDS)).toBe(2);
    await expect(c.applyRecords([], { retry: false })).rejects.toMatchObject({ status: 503 });
    expect(s.count(RECORDS)).toBe(3);
  });

  it('stops retrying when the health probe fails', async () => {
    const s = await scriptedServer({
      [STATS]: [{ status: 503, body: { detail: 'down' } }],
      [HEALTH]: Array(10).fill({ status: 503 }),
    });
    closers.push(s.close);
    const { c, slept } = client(s.url);
    await expect(c.statistics()).rejects.toMatchObject({ status: 503 });
    expect(s.count(STATS)).toBe(1);
    expect(s.count(HEALTH)).toBe(4);
    expect(slept).toEqual([100, 200, 500]);
  });

  it('retryDelays [] means a single attempt; a refused connection is a ConnectionError', async () => {
    const s = await scriptedServer({});
    await s.close();
    const { c } = client(s.url, { retryDelays: [] });
    await expect(c.statistics()).rejects.toMatchObject({
      name: 'AGL_ConnectionError',
      message: expect.stringMatching(/agl store serve/),
    });
  });

  it('sends the bearer token', async () => {
    const s = await scriptedServer({ [STATS]: [{ status: 200, body: stats }] });
    closers.push(s.close);
    const { c } = client(s.url, { token: 'tok' });
    await c.statistics();
    expect(s.seen[0]!.headers.authorization).toBe('Bearer tok');
  });
});

describe('StoreClient dequeue, batches and waits', () => {
  it('dequeue is never retried: a 500 gives null/[] and one warning; a 4xx is raised', async () => {
    const DQ = '/v1/agl/queues/rollouts/dequeue';
    const s = await scriptedServer({
      [DQ]: [
        { status: 500, body: { detail: 'x' } },
        { status: 500, body: { detail: 'x' } },
        { status: 422, body: { detail: 'limit: bad', error_type: 'AGL_ValidationError' } },
      ],
    });
    closers.push(s.close);
    const warnings: string[] = [];
    const { c } = client(s.url, { onWarning: (m) => warnings.push(m) });
    expect(await c.dequeueRollout({ workerId: 'w' })).toBeNull();
    expect(await c.dequeueRollouts({ limit: 3 })).toEqual([]);
    await expect(c.dequeueRollouts({ limit: 2 })).rejects.toMatchObject({ name: 'AGL_ValidationError' });
    expect(s.count(DQ)).toBe(3);
    expect(s.count(HEALTH)).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(s.seen[0]!.body).toEqual({ limit: 1, worker_id: 'w' });
  });

  it('limit ≤ 0 and empty batches make no HTTP call; enqueueRollouts sends one batch request', async () => {
    const s = await scriptedServer({ '/v1/agl/queues/rollouts/enqueue': [{ status: 201, body: [] }] });
    closers.push(s.close);
    const { c } = client(s.url);
    expect(await c.dequeueRollouts({ limit: 0 })).toEqual([]);
    expect(await c.enqueueRollouts([])).toEqual([]);
    expect(await c.addSpans([])).toEqual([]);
    expect(s.seen).toHaveLength(0);
    await c.enqueueRollouts([{ input: 1 }, { input: 2 }, { input: 3 }]).catch(() => undefined);
    expect(s.seen.map((r) => r.path)).toEqual(['/v1/agl/queues/rollouts/enqueue']);
    expect((s.seen[0]!.body as { rollouts: unknown[] }).rollouts).toHaveLength(3);
  });

  it('falls back to one POST /spans per span against a server without /spans/batch (AGL 0.3)', async () => {
    const span = (id: string) => ({
      rollout_id: 'ro-1',
      attempt_id: 'at-1',
      sequence_id: 1,
      trace_id: 't',
      span_id: id,
      parent_id: null,
      name: 'n',
      status: { status_code: 'UNSET', description: null },
      attributes: {},
      events: [],
      links: [],
      start_time: null,
      end_time: null,
      context: null,
      parent: null,
      resource: { attributes: {}, schema_url: '' },
    });
    const s = await scriptedServer({
      '/v1/agl/spans/batch': [{ status: 404, body: { detail: 'Not Found' } }],
      '/v1/agl/spans': [
        { status: 201, body: span('a') },
        { status: 201, body: null },
        { status: 201, body: span('c') },
      ],
    });
    closers.push(s.close);
    const { c } = client(s.url);
    const input = (id: string) => ({
      rolloutId: 'ro-1',
      attemptId: 'at-1',
      sequenceId: 1,
      traceId: 't',
      spanId: id,
      parentId: null,
      name: 'n',
      startTime: null,
      endTime: null,
    });
    const stored = await c.addSpans([input('a'), input('b'), input('c')]);
    expect(stored.map((x) => x.spanId)).toEqual(['a', 'c']);
    await c.addSpans([input('d')]).catch(() => undefined);
    expect(s.count('/v1/agl/spans/batch')).toBe(1);
  });

  it('addSpans splits a large call into requests the server accepts (at most 1,000 spans each), in order', async () => {
    const store = new MemoryStore();
    const server = await serve(store, { maxSpansPerRequest: 1000 });
    const { c } = client(server.url);
    const r = await store.startRollout({ input: 1 });
    const spans = Array.from({ length: 2500 }, (_, i) => ({
      rolloutId: r.rolloutId,
      attemptId: r.attempt.attemptId,
      sequenceId: i + 1,
      traceId: 't',
      spanId: `s${i}`,
      parentId: null,
      name: 'n',
      startTime: null,
      endTime: null,
    }));
    const stored = await c.addSpans(spans);
    expect(stored.map((x) => x.spanId)).toEqual(spans.map((x) => x.spanId));
    expect((await store.querySpans({ rolloutId: r.rolloutId })).items.length).toBe(2500);
  });

  it('waitForQueue shares one long poll among callers, and a server without the route (AGL 0.3) makes it throw once and never ask again', async () => {
    const QUEUE = '/v1/agl/waits/queue';
    const s = await scriptedServer({
      [QUEUE]: [
        { delayMs: 100, then: { status: 200, body: { queued: true } } },
        { status: 404, body: { detail: 'Not Found' } },
      ],
    });
    closers.push(s.close);
    const { c } = client(s.url);
    expect(
      await Promise.all([
        c.waitForQueue({ timeoutMs: 5000 }),
        c.waitForQueue({ timeoutMs: 5000 }),
        c.waitForQueue({ timeoutMs: 5000 }),
      ]),
    ).toEqual([true, true, true]);
    expect(s.count(QUEUE)).toBe(1);
    expect((s.seen[0]!.body as { timeout: number }).timeout).toBe(5);
    await expect(c.waitForQueue({ timeoutMs: 5000 })).rejects.toMatchObject({ status: 404 });
    await expect(c.waitForQueue({ timeoutMs: 5000 })).rejects.toMatchObject({ status: 404 });
    expect(s.count(QUEUE)).toBe(2);
  });

  it('waitForRollouts long-polls in capped chunks while the server reports pending rollouts', async () => {
    const rollout = {
      rollout_id: 'ro-1',
      input: 1,
      start_time: 1_700_000_001,
      end_time: 1_700_000_002,
      mode: null,
      resources_id: null,
      status: 'succeeded',
      config: { timeout_seconds: null, unresponsive_seconds: null, max_attempts: 1, retry_condition: [] },
      metadata: {},
    };
    const WAIT = '/v1/agl/waits/rollouts';
    const s = await scriptedServer({
      [WAIT]: [
        { status: 200, body: [], headers: { 'x-agl-wait-pending': '1' } },
        { status: 200, body: [], headers: { 'x-agl-wait-pending': '1' } },
        { status: 200, body: [rollout], headers: { 'x-agl-wait-pending': '0' } },
      ],
    });
    closers.push(s.close);
    const { c } = client(s.url, { waitChunkSeconds: 30 });
    const done = await c.waitForRollouts(['ro-1', 'ro-unknown'], { timeoutSeconds: null });
    expect(done.map((r) => r.rolloutId)).toEqual(['ro-1']);
    expect(s.seen.map((r) => r.body)).toEqual(Array(3).fill({ rollout_ids: ['ro-1', 'ro-unknown'], timeout: 30 }));
  });

  it('against the real server: a long wait returns as soon as the rollout finishes; unknown ids do not keep it waiting', async () => {
    const store = new MemoryStore();
    const server = await serve(store, { maxWaitSeconds: 1 });
    const { c } = client(server.url, { waitChunkSeconds: 5 });
    const r = await store.startRollout({ input: 1 });
    const waiting = c.waitForRollouts([r.rolloutId, 'ro-unknown'], { timeoutSeconds: 60 });
    await store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
    expect((await waiting).map((x) => x.status)).toEqual(['succeeded']);
    expect(await c.waitForRollouts(['ro-unknown'], { timeoutSeconds: 60 })).toEqual([]);
  });
});

describe('StoreClient production routes', () => {
  it('applyRecords sends one request that the server applies in order; addFeedback writes the final reward', async () => {
    const store = new MemoryStore();
    const server = await serve(store);
    const { c } = client(server.url);
    const span = {
      rolloutId: 'ro-p1',
      attemptId: 'at-p1',
      sequenceId: 1,
      traceId: 't1',
      spanId: 's1',
      parentId: null,
      name: 'openai.chat.completion',
      startTime: 1_700_000_011,
      endTime: 1_700_000_012,
      attributes: { 'gen_ai.prompt.0.role': 'user' },
    };
    const records = [
      {
        kind: 'start' as const,
        rolloutId: 'ro-p1',
        attemptId: 'at-p1',
        input: { q: 'hi' },
        metadata: {},
        startTime: 1_700_000_010,
      },
      { kind: 'spans' as const, spans: [span] },
      {
        kind: 'end' as const,
        rolloutId: 'ro-p1',
        attemptId: 'at-p1',
        status: 'succeeded' as const,
        endTime: 1_700_000_013,
      },
      {
        kind: 'end' as const,
        rolloutId: 'ro-unknown',
        attemptId: 'at-x',
        status: 'failed' as const,
        endTime: 1_700_000_013,
      },
    ];
    const result = await c.applyRecords(records);
    expect(result.applied).toBe(3);
    expect(result.rejected).toEqual([
      { index: 3, kind: 'end', errorType: 'AGL_NotFoundError', detail: expect.stringContaining('ro-unknown') },
    ]);
    expect(await store.getRolloutById('ro-p1')).toMatchObject({
      status: 'succeeded',
      startTime: 1_700_000_010,
      endTime: 1_700_000_013,
    });
    expect((await store.querySpans({ rolloutId: 'ro-p1' })).items[0]?.attributes).toEqual(span.attributes);

    const feedback = await c.addFeedback('ro-p1', 1, { comment: 'thanks', dimensions: { tone: 0.5 } });
    expect(feedback).toMatchObject({ rolloutId: 'ro-p1', sequenceId: 2 });
    expect(feedback.attributes).toMatchObject({ 'agl.reward.source': 'feedback', 'agl.feedback.comment': 'thanks' });
    await expect(c.addFeedback('ro-p1', Number.NaN as unknown as number)).rejects.toThrow(/reward/);
    await expect(c.addFeedback('ro-nope', 1)).rejects.toMatchObject({ name: 'AGL_NotFoundError' });
  });
});
