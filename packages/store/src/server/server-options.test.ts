import { afterEach, describe, expect, it } from 'vitest';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer } from './index';

const open: Array<{ server: StoreServer; store: LightningStore }> = [];
afterEach(async () => {
  for (const { server, store } of open.splice(0)) {
    await server.close();
    await store.close();
  }
});

async function start(
  options: Omit<Parameters<typeof createStoreServer>[0], 'store'> = {},
  store: LightningStore = new MemoryStore(),
) {
  const server = await createStoreServer({ store, port: 0, ...options });
  open.push({ server, store });
  return server;
}

describe('store server options: bind address, CORS, timeouts, event route', () => {
  it('binds 127.0.0.1 by default and advertises that URL', async () => {
    const server = await start();
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.otlpTracesEndpoint()).toBe(`${server.url}/v1/traces`);
  });

  it('warns when binding wider than loopback without a token, not with one', async () => {
    const warnings: string[] = [];
    await start({ host: '0.0.0.0', onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/binds 0\.0\.0\.0 without a token.*--token/);
    await start({ host: '0.0.0.0', token: 't', onWarning: (m) => warnings.push(m) });
    expect(warnings).toHaveLength(1);
  });

  it('sends no CORS headers unless --cors-origin is given; then preflights pass without a token', async () => {
    const plain = await start();
    const noCors = await fetch(`${plain.url}/v1/agl/health`, { headers: { origin: 'http://evil.example' } });
    expect(noCors.headers.get('access-control-allow-origin')).toBeNull();

    const withCors = await start({ corsOrigin: ['http://localhost:5173'], token: 'tok' });
    const preflight = await fetch(`${withCors.url}/v1/agl/rollouts/search`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const other = await fetch(`${withCors.url}/v1/agl/health`, { headers: { origin: 'http://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers 503 with a timeout detail when a request takes longer than requestTimeoutMs', async () => {
    const backing = new MemoryStore();
    const slow = new Proxy(backing, {
      get(target, key, receiver) {
        if (key === 'statistics') return () => new Promise(() => undefined);
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as LightningStore;
    const server = await start({ requestTimeoutMs: 200 }, slow);
    const response = await fetch(`${server.url}/v1/agl/statistics`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      error_type: 'AGL_TimeoutError',
      detail: expect.stringMatching(/200 ms/),
    });
  });

  it('long polls are capped per request and report how many rollouts are still pending', async () => {
    const store = new MemoryStore();
    const server = await start({ maxWaitSeconds: 0.2 }, store);
    const r = await store.startRollout({ input: 1 });
    const response = await fetch(`${server.url}/v1/agl/waits/rollouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rollout_ids: [r.rolloutId, 'ro-unknown'], timeout: null }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    expect(response.headers.get('x-agl-wait-pending')).toBe('1');
  });

  it('AGL 1.0 event route: a reward lands as an AGL 0.3 reward span; attempt "0" means the latest attempt', async () => {
    const store = new MemoryStore();
    const server = await start({ token: 'k' }, store);
    const r = await store.startRollout({ input: 1 });
    const post = (attempt: string, body: unknown) =>
      fetch(`${server.url}/api/rollouts/${r.rolloutId}/attempt/${attempt}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
        body: JSON.stringify(body),
      });
    const reward = await post('0', { event_type: 'reward', data: { value: 0.75, reason: 'exact match' } });
    expect(reward.status).toBe(200);
    expect(await reward.json()).toMatchObject({
      event_type: 'reward',
      rollout_id: r.rolloutId,
      attempt_id: r.attempt.attemptId,
      data: { value: 0.75 },
    });
    const custom = await post(r.attempt.attemptId, {
      event_type: 'tool_log',
      data: { lines: ['a', 'b'], nested: { n: 1 } },
    });
    expect(custom.status).toBe(200);
    const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
    expect(spans.map((s) => s.name)).toEqual(['agentlightning.annotation', 'agentlightning.annotation']);
    expect(spans[0]!.attributes).toMatchObject({
      'agentlightning.reward.0.name': 'primary',
      'agentlightning.reward.0.value': 0.75,
      'agentlightning.event.type': 'reward',
      'agentlightning.event.data.reason': 'exact match',
    });
    expect(spans[1]!.attributes).toMatchObject({
      'agentlightning.event.type': 'tool_log',
      'agentlightning.event.data.lines': ['a', 'b'],
      'agentlightning.event.data.nested.n': 1,
    });
    expect(spans[0]!.sequenceId).toBeLessThan(spans[1]!.sequenceId);
    expect((await store.getLatestAttempt(r.rolloutId))?.status).toBe('running');
    expect((await post('at-nope', { event_type: 'reward', data: { value: 1 } })).status).toBe(404);
  });
});
