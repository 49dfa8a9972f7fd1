import type { SpanInput, Span } from '@agl/core/schema';
import { MemoryStore } from '@agl/store';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayFixture, spansOf, startGatewayFixture } from '../__fixtures__/gateway-fixture';
import { deferred } from '../__fixtures__/scripted-backend';
import { startGateway } from '../index';

/** A real memory store whose span writes fail, to check that nothing half-written lands and the client is told. */
class FailingSpanStore extends MemoryStore {
  override async addSpan(_span: SpanInput): Promise<Span | null> {
    throw new Error('disk full');
  }

  override async addSpans(_spans: SpanInput[]): Promise<Span[]> {
    throw new Error('disk full');
  }
}

/** Checks an error answer: its status, `error_type`, and a part of its `detail`. */
async function expectRefusal(res: Response, status: number, errorType: string, detailPart: string): Promise<void> {
  expect(res.status, detailPart).toBe(status);
  expect(await res.json()).toMatchObject({ error_type: errorType, detail: expect.stringContaining(detailPart) });
}

describe('gateway error mapping', () => {
  let fx: GatewayFixture;
  const never = deferred<never>();

  beforeAll(async () => {
    fx = await startGatewayFixture({
      backend: {
        respond: (request) => {
          const text = request.messages.at(-1)?.content ?? '';
          if (text === 'too long')
            return {
              error: { status: 400, message: 'This model maximum context length is 8 tokens', type: 'BadRequestError' },
            };
          if (text === 'crash')
            return { error: { status: 500, message: 'CUDA out of memory', type: 'InternalServerError' } };
          if (text === 'hang') return never.promise;
          return { content: 'ok' };
        },
      },
      gateway: { timeoutMs: 300 },
    });
  });
  afterAll(() => fx.close());

  const post = (path: string, body: string): Promise<Response> =>
    fetch(`${fx.gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const chat = (content: string): string => JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] });

  it('passes backend errors through with their status, labelled as the backend’s, and stores no span', async () => {
    const client = new OpenAI({ baseURL: fx.baseURL, apiKey: 'x', maxRetries: 0 });
    await expect(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'too long' }] }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('maximum context length'),
    });
    const res = await post(fx.baseURL.replace(fx.gateway.url, '') + '/chat/completions', chat('crash'));
    expect(res.status).toBe(500);
    expect(res.headers.get('x-agl-error-source')).toBe('backend');
    expect(await res.json()).toMatchObject({ agl_error_source: 'backend', error: { message: 'CUDA out of memory' } });
    expect(await spansOf(fx.store, fx.rollout.rolloutId)).toEqual([]);
  });

  it('maps a backend timeout to 504 and a refused connection to 502, with clear messages', async () => {
    const timeout = await post('/v1/chat/completions', chat('hang'));
    await expectRefusal(timeout, 504, 'upstream_timeout', 'did not answer within 300 ms');

    const store = new MemoryStore();
    const dead = await startGateway({ store, backend: 'http://127.0.0.1:9/v1', port: 0 });
    try {
      const res = await fetch(`${dead.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chat('hi'),
      });
      expect(res.status).toBe(502);
      const body = (await res.json()) as { error_type: string; detail: string };
      expect(body.error_type).toBe('upstream_unreachable');
      expect(body.detail).toContain('http://127.0.0.1:9/v1/chat/completions');
      expect(res.headers.get('x-agl-error-source')).toBe('gateway');
    } finally {
      await dead.close();
      await store.close();
    }
  });

  it('answers malformed requests with 400 naming the problem, without calling the backend', async () => {
    const before = fx.llm.requests.length;
    const cases: [string, string, string][] = [
      ['/v1/chat/completions', '{"model": "m", "messages": [', 'not valid JSON'],
      ['/v1/chat/completions', '[1, 2]', 'must be a JSON object'],
      ['/v1/chat/completions', '{"model": "m"}', '"messages" must be a non-empty array'],
      ['/v1/chat/completions', '{"messages": [{"content": "x"}]}', '"messages[0].role" must be a string'],
      [
        '/v1/chat/completions',
        '{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}',
        '"stream" must be true or false',
      ],
      ['/v1/completions', '{"model": "m"}', '"prompt" is required'],
      [
        '/v1/messages',
        '{"model": "m", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}',
        'put the system prompt in "system"',
      ],
      ['/v1/responses', '{"model": "m"}', '"input" is required'],
    ];
    for (const [path, body, message] of cases) {
      const res = await post(path, body);
      await expectRefusal(res, 400, 'invalid_request', message);
    }
    const header = await fetch(`${fx.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-rollout-id': fx.rollout.rolloutId },
      body: chat('hi'),
    });
    expect(header.status).toBe(400);
    expect(await header.json()).toMatchObject({ detail: expect.stringContaining('x-attempt-id') });
    expect(fx.llm.requests.length).toBe(before);
  });

  it('answers unknown rollouts, paths, modes and methods with 404/405', async () => {
    const unknown = await post('/rollout/ro-missing/attempt/at-1/v1/chat/completions', chat('hi'));
    await expectRefusal(unknown, 404, 'not_found', 'ro-missing');
    expect((await post('/v1/embeddings', '{}')).status).toBe(404);
    expect((await post('/proxy/rollout/r/attempt/a/mode/test/openai/v1/chat/completions', chat('hi'))).status).toBe(
      404,
    );
    expect((await fetch(`${fx.gateway.url}/v1/chat/completions`)).status).toBe(405);
    expect((await post('/nothing', '{}')).status).toBe(404);
  });

  it('with spanWrite "before-response", tells the client and stores nothing when the span cannot be written', async () => {
    const store = new FailingSpanStore();
    const gateway = await startGateway({
      store,
      backend: fx.llm.baseURL,
      backendApiKey: 'sk-backend-secret-123',
      port: 0,
      spanWrite: 'before-response',
    });
    try {
      const r = await store.startRollout({ input: null, mode: 'train' });
      const base = `${gateway.url}/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/v1`;
      const res = await fetch(`${base}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chat('hi'),
      });
      await expectRefusal(res, 503, 'store_unavailable', 'disk full');
      const stream = await fetch(`${base}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const text = await stream.text().catch(() => '');
      expect(text).not.toContain('[DONE]');
      expect((await store.statistics()).totalSpans).toBe(0);
    } finally {
      await gateway.close();
      await store.close();
    }
  });

  it('with spanWrite "after-response" (the memory store\'s default), answers and logs a span that cannot be written', async () => {
    const store = new FailingSpanStore();
    const logged: string[] = [];
    const gateway = await startGateway({
      store,
      backend: fx.llm.baseURL,
      backendApiKey: 'sk-backend-secret-123',
      port: 0,
      log: (line) => logged.push(line),
    });
    try {
      const r = await store.startRollout({ input: null, mode: 'train' });
      const base = `${gateway.url}/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/v1`;
      for (const stream of [false, true]) {
        const res = await fetch(`${base}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', stream, messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.status).toBe(200);
        expect(await res.text()).toContain('ok');
        await gateway.drained();
      }
      expect(logged).toEqual([
        expect.stringMatching(/span not stored after the answer was sent: .*disk full/),
        expect.stringMatching(/span not stored after the answer was sent: .*disk full/),
      ]);
      expect((await store.statistics()).totalSpans).toBe(0);
    } finally {
      await gateway.close();
      await store.close();
    }
  });
});
