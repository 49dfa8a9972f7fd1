import type { TestLlmReply } from '@agl/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayFixture, spansOf, startGatewayFixture } from '../__fixtures__/gateway-fixture';
import { deferred } from '../__fixtures__/scripted-backend';

describe('gateway pause / drain', () => {
  let fx: GatewayFixture;
  let client: OpenAI;
  const arrived = deferred();
  const release = deferred<TestLlmReply>();

  beforeAll(async () => {
    fx = await startGatewayFixture({
      backend: {
        respond: (request) => {
          if (request.messages.at(-1)?.content === 'slow') {
            arrived.resolve();
            return release.promise;
          }
          return { content: 'fast' };
        },
      },
    });
    client = new OpenAI({ baseURL: fx.baseURL, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => fx.close());

  const control = async (path: string, init: RequestInit = {}): Promise<Record<string, unknown>> => {
    const res = await fetch(`${fx.gateway.url}${path}`, init);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it('lets in-flight calls finish, refuses new ones with 429 + Retry-After, and resumes', async () => {
    const inflight = client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'slow' }] });
    await arrived.promise;
    expect(await control('/proxy/state')).toEqual({ paused: false, retry_after_seconds: 5, reason: null, inflight: 1 });

    const paused = await control('/proxy/pause', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ retry_after_seconds: 3, reason: 'weight update' }),
    });
    expect(paused).toEqual({ paused: true, retry_after_seconds: 3, reason: 'weight update', inflight: 1 });

    const refused = await fetch(`${fx.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'new' }] }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(refused.headers.get('x-agl-paused')).toBe('true');
    expect(await refused.json()).toMatchObject({
      error_type: 'gateway_paused',
      detail: expect.stringContaining('weight update'),
    });
    await expect(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'new' }] }),
    ).rejects.toMatchObject({ status: 429 });
    expect(fx.llm.requests.filter((r) => JSON.stringify(r.body).includes('"new"'))).toHaveLength(0);

    let drained = false;
    const drain = fx.gateway.drained().then(() => {
      drained = true;
    });
    expect(drained).toBe(false);
    release.resolve({ content: 'done slowly' });
    expect((await inflight).choices[0]!.message.content).toBe('done slowly');
    await drain;
    expect(await control('/proxy/state')).toMatchObject({ paused: true, inflight: 0 });
    expect(
      (await spansOf(fx.store, fx.rollout.rolloutId)).map((s) => s.attributes['gen_ai.completion.0.content']),
    ).toEqual(['done slowly']);

    expect(await control('/proxy/resume', { method: 'POST' })).toEqual({
      paused: false,
      retry_after_seconds: 3,
      reason: null,
      inflight: 0,
    });
    const after = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'new' }] });
    expect(after.choices[0]!.message.content).toBe('fast');
  });

  it('rejects a malformed pause request', async () => {
    const res = await fetch(`${fx.gateway.url}/proxy/pause`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ retry_after_seconds: 'soon' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error_type: 'invalid_request',
      detail: expect.stringContaining('retry_after_seconds'),
    });
    expect(fx.gateway.state().paused).toBe(false);
  });

  it('with spanWrite "after-response" (the memory store\'s default), answers first and counts the call in flight until its span is stored', async () => {
    const late = await startGatewayFixture();
    try {
      const res = await fetch(`${late.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '4 + 4' }] }),
      });
      expect(res.status).toBe(200);
      const sequenceId = Number(res.headers.get('x-agl-sequence-id'));
      expect(sequenceId).toBeGreaterThan(0);
      await late.gateway.drained();
      const spans = await spansOf(late.store, late.rollout.rolloutId);
      expect(spans.map((s) => [s.sequenceId, s.spanId])).toEqual([[sequenceId, res.headers.get('x-agl-span-id')]]);
    } finally {
      await late.close();
    }
  });
});
