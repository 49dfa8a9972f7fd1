import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '@agl/testing';
import { toWire } from '@agl/core/schema';
import { recordRewardSpan } from '@agl/core/store';
import { MemoryStore } from '../../memory/memory-store';
import { createStoreServer, type StoreServer } from '../index';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function start(token?: string): Promise<{ server: StoreServer; store: MemoryStore; clock: FakeClock }> {
  const clock = new FakeClock();
  const store = new MemoryStore({ clock });
  const server = await createStoreServer({ store, clock, port: 0, ...(token ? { token } : {}) });
  closers.push(
    () => store.close(),
    () => server.close(),
  );
  return { server, store, clock };
}

async function call(
  url: string,
  init: RequestInit = {},
): Promise<{
  status: number;
  body: Record<string, unknown> & { items: Array<Record<string, unknown>>; detail: string };
}> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('production routes', () => {
  it('late feedback on a finished, already summarised rollout shows at once on the dashboard routes', async () => {
    const { server, store, clock } = await start();
    const r = await store.startRollout({ input: 'q' });
    await recordRewardSpan(store, r.rolloutId, {
      'agentlightning.reward.0.name': 'primary',
      'agentlightning.reward.0.value': 0,
    });
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    clock.advance(3600); // long settled: its summary is cached
    const summary = `${server.url}/v1/agl/ext/rollouts/${r.rolloutId}`;
    expect((await call(summary)).body).toMatchObject({ final_reward: 0, feedback_count: 0 });
    expect((await call(`${server.url}/v1/agl/ext/rollouts`)).body.items[0]).toMatchObject({ final_reward: 0 });

    const given = await call(`${server.url}/v1/agl/rollouts/${r.rolloutId}/feedback`, {
      method: 'POST',
      body: JSON.stringify({ reward: 1, comment: 'thanks' }),
    });
    expect(given.status).toBe(201);
    expect((await call(summary)).body).toMatchObject({
      final_reward: 1,
      feedback_count: 1,
      feedback: [{ reward: 1, comment: 'thanks', dimensions: {}, time: expect.any(Number) }],
    });
    expect((await call(`${server.url}/v1/agl/ext/rollouts`)).body.items[0]).toMatchObject({ final_reward: 1 });

    // A reward span that a recorder's batch delivers late counts at once too (feedback still wins).
    const seq = await store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId);
    const late = {
      rolloutId: r.rolloutId,
      attemptId: r.attempt.attemptId,
      sequenceId: seq,
      traceId: 'c'.repeat(32),
      spanId: 'd'.repeat(16),
      parentId: null,
      name: 'agentlightning.annotation',
      startTime: clock.now(),
      endTime: clock.now(),
      attributes: {
        'agentlightning.reward.0.name': 'primary',
        'agentlightning.reward.0.value': 0.5,
        'agl.reward.source': 'feedback',
      },
    };
    const applied = await call(`${server.url}/v1/agl/records`, {
      method: 'POST',
      body: JSON.stringify({ records: [toWire('productionRecord', { kind: 'spans', spans: [late] })] }),
    });
    expect(applied.body).toMatchObject({ applied: 1, rejected: [] });
    expect((await call(summary)).body).toMatchObject({ final_reward: 0.5, feedback_count: 2 });
  });

  it('the records and feedback routes refuse a request without the server token', async () => {
    const { server, store } = await start('secret-token');
    const r = await store.startRollout({ input: 'q' });
    const routes = [
      [`${server.url}/v1/agl/records`, { records: [] }],
      [`${server.url}/v1/agl/rollouts/${r.rolloutId}/feedback`, { reward: 1 }],
    ] as const;
    for (const [url, body] of routes) {
      const refused = await call(url, { method: 'POST', body: JSON.stringify(body) });
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatch(/Authorization/);
      const wrong = await call(url, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { authorization: 'Bearer nope' },
      });
      expect(wrong.status).toBe(401);
      const ok = await call(url, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { authorization: 'Bearer secret-token' },
      });
      expect(ok.status).toBeLessThan(300);
    }
    expect((await store.querySpans({ rolloutId: r.rolloutId })).total).toBe(1);
  });
});
