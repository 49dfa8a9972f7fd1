import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KEY, type GatewayFixture, startGatewayFixture } from '../__fixtures__/gateway-fixture';

describe('gateway auth', () => {
  let fx: GatewayFixture;
  const TOKEN = 'gw-token-abc';

  beforeAll(async () => {
    fx = await startGatewayFixture({ gateway: { token: TOKEN } });
  });
  afterAll(() => fx.close());

  const post = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${fx.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('refuses calls without the token or with a wrong one, before reaching the backend', async () => {
    const before = fx.llm.requests.length;
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong' },
      { 'x-api-key': 'wrong' },
      { authorization: TOKEN },
    ];
    for (const headers of attempts) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({
        error_type: 'unauthorized',
        detail: expect.stringContaining('x-api-key'),
      });
    }
    expect(fx.llm.requests.length).toBe(before);
    expect((await fetch(`${fx.gateway.url}/proxy/state`)).status).toBe(401);
  });

  it('accepts the bearer token (OpenAI SDK) and never forwards it upstream', async () => {
    const client = new OpenAI({ baseURL: fx.baseURL, apiKey: TOKEN, maxRetries: 0 });
    expect(
      (await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '1 + 2' }] })).choices[0]!
        .message.content,
    ).toBe('3');
    const sent = fx.llm.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${BACKEND_KEY}`);
    expect(JSON.stringify(sent.headers)).not.toContain(TOKEN);
  });

  it('accepts x-api-key (Anthropic SDK)', async () => {
    const client = new Anthropic({ baseURL: fx.baseURL.replace(/\/v1$/, ''), apiKey: TOKEN, maxRetries: 0 });
    const msg = await client.messages.create({
      model: 'c',
      max_tokens: 8,
      messages: [{ role: 'user', content: '2 + 2' }],
    });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: '4' });
    expect(JSON.stringify(fx.llm.requests.at(-1)!.headers)).not.toContain(TOKEN);
  });

  it('keeps /healthz open', async () => {
    const res = await fetch(`${fx.gateway.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
