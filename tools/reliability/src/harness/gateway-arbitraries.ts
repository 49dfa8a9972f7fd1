import fc from 'fast-check';
import type { FuzzRequest } from './fuzz-http';
import type { Weighted } from './store-arbitraries';

/** What the gateway generators know. */
export interface GatewayFuzzContext {
  token: string;
  owners: { rolloutId: string; attemptId: string }[];
  /** Models the backend answers with an HTTP error, and its status. */
  failingModels: Record<string, number>;
}

const TRAVERSAL = ['..', '..%2F..', '%2e%2e', 'a%00b', '%', '%zz', '....//', 'x'.repeat(3000), '~', ';', '%E2%80%AE'];
const WRONG_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'text/xml', 'application/octet-stream'];

/** Builds the gateway generators. */
export function gatewayArbitraries(ctx: GatewayFuzzContext) {
  const auth = { authorization: `Bearer ${ctx.token}` };
  const owner = fc.constantFrom(...ctx.owners);
  const text = fc.string({ maxLength: 40 });
  const chat = fc.record({
    model: fc.constant('test-model'),
    messages: fc.array(fc.record({ role: fc.constantFrom('user', 'system'), content: text }), {
      minLength: 1,
      maxLength: 3,
    }),
  });
  const call = (
    path: string,
    body: unknown,
    kind: string,
    expect: FuzzRequest['expect'],
    headers: Record<string, string> = {},
  ): FuzzRequest => ({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...auth, ...headers },
    body: JSON.stringify(body),
    expect,
    kind,
  });
  const scoped = owner.chain((o) =>
    fc.constantFrom(
      `/rollout/${o.rolloutId}/attempt/${o.attemptId}/v1`,
      `/proxy/rollout/${o.rolloutId}/attempt/${o.attemptId}/mode/train/openai/v1`,
    ),
  );

  const valid: Weighted[] = [
    chat.map((b) => call('/v1/chat/completions', b, 'valid-chat', 'accept')),
    fc.tuple(scoped, chat).map(([base, b]) => call(`${base}/chat/completions`, b, 'valid-scoped-chat', 'accept')),
    fc
      .tuple(scoped, chat)
      .map(([base, b]) => call(`${base}/chat/completions`, { ...b, stream: true }, 'valid-scoped-stream', 'accept')),
    text.map((prompt) => call('/v1/completions', { model: 'test-model', prompt }, 'valid-completion', 'accept')),
    text.map((input) => call('/v1/responses', { model: 'test-model', input }, 'valid-responses', 'accept')),
    text.map((content) =>
      call(
        '/v1/messages',
        { model: 'test-model', max_tokens: 16, messages: [{ role: 'user', content }] },
        'valid-messages',
        'accept',
      ),
    ),
    fc.constant({ method: 'GET', path: '/v1/models', headers: auth, expect: 'accept' as const, kind: 'valid-models' }),
  ].map((arbitrary) => ({ arbitrary, weight: 10 }));

  const backendFail: Weighted[] = [
    fc
      .tuple(fc.constantFrom(...Object.keys(ctx.failingModels)), fc.option(scoped, { nil: undefined }), chat)
      .map(([model, base, b]) => call(`${base ?? '/v1'}/chat/completions`, { ...b, model }, 'backend-fail', 'any')),
  ].map((arbitrary) => ({ arbitrary, weight: 8 }));

  const invalid: Weighted[] = [
    fc
      .tuple(chat, fc.constantFrom('messages', 'stream', 'model'), fc.constantFrom(5, 'yes', { a: 1 }, [1, 2]))
      .filter(([, key, v]) => !(key === 'model' && typeof v === 'string'))
      .map(([b, key, v]) => call('/v1/chat/completions', { ...b, [key]: v }, 'chat-wrong-type', 'reject')),
    fc.constantFrom('[]', '1', '"x"', 'null', '{', '{"messages":', '').map((body) => ({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', ...auth },
      body,
      expect: 'reject' as const,
      kind: 'chat-not-object',
    })),
    fc.tuple(chat, fc.nat()).map(([b, cut]) => {
      const json = JSON.stringify(b);
      return {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', ...auth },
        body: json.slice(0, 1 + (cut % (json.length - 1))),
        expect: 'reject' as const,
        kind: 'chat-truncated',
      };
    }),
    fc
      .tuple(
        fc.constantFrom('/v1/chat/completions', '/v1/models', '/proxy/state', '/v1/nothing'),
        fc.constantFrom(undefined, `Bearer ${ctx.token}x`, ctx.token, 'Bearer '),
      )
      .map(([path, authorization]) => ({
        method: path === '/v1/models' || path === '/proxy/state' ? 'GET' : 'POST',
        path,
        headers: (authorization === undefined ? {} : { authorization }) as Record<string, string>,
        body: path.includes('chat') ? '{}' : undefined,
        expect: 'reject' as const,
        kind: 'gateway-bad-token',
      })),
    fc
      .constantFrom(
        '/',
        '/v2/chat/completions',
        '/rollout/x',
        '/proxy/rollout/a/attempt/b/mode/train/openai/v2/x',
        '/proxy/nothing',
      )
      .map((path) => ({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', ...auth },
        body: '{}',
        expect: 'reject' as const,
        kind: 'unknown-route',
      })),
    fc
      .integer({ min: 600_000, max: 900_000 })
      .map((n) =>
        call(
          '/v1/chat/completions',
          { model: 'test-model', messages: [{ role: 'user', content: 'x'.repeat(n) }] },
          'gateway-over-limit',
          'reject',
        ),
      ),
  ].map((arbitrary, i, all) => ({ arbitrary, weight: i === all.length - 1 ? 1 : 10 }));

  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
  const anyBody = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
    fc.string({ maxLength: 100 }),
  );
  const unknown: Weighted[] = [
    fc
      .tuple(
        fc.constantFrom('/v1/chat/completions', '/v1/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'),
        anyBody,
        fc.constantFrom('application/json', ...WRONG_TYPES),
      )
      .map(([path, body, type]) => ({
        method: 'POST',
        path,
        headers: { 'content-type': type, ...auth },
        body,
        expect: 'any' as const,
        kind: 'random-body',
      })),
    fc
      .tuple(fc.constantFrom(...TRAVERSAL), fc.constantFrom(...TRAVERSAL), chat, fc.boolean())
      .map(([r, a, b, agl10]) =>
        call(
          agl10
            ? `/proxy/rollout/${r}/attempt/${a}/mode/train/openai/v1/chat/completions`
            : `/rollout/${r}/attempt/${a}/v1/chat/completions`,
          b,
          'traversal-ids',
          'any',
        ),
      ),
    fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), chat).map(([r, a, b]) =>
      call('/v1/chat/completions', b, 'header-ids', 'any', {
        'x-rollout-id': encodeURIComponent(r),
        'x-attempt-id': encodeURIComponent(a),
      }),
    ),
    fc
      .tuple(
        fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'HEAD'),
        fc.constantFrom('/v1/chat/completions', '/v1/models', '/proxy/state', '/proxy/resume', '/healthz'),
      )
      .map(([method, path]) => ({ method, path, headers: auth, expect: 'any' as const, kind: 'method' })),
    fc.integer({ min: 100, max: 50_000 }).map((depth) => ({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', ...auth },
      body: `{"model":"test-model","messages":[{"role":"user","content":${nested(depth)}}]}`,
      expect: 'any' as const,
      kind: 'gateway-deep',
    })),
    fc
      .tuple(chat, fc.jsonValue({ maxDepth: 2 }))
      .map(([b, extra]) =>
        call('/v1/chat/completions', { ...b, messages: [...b.messages, extra] }, 'odd-message', 'any'),
      ),
  ].map((arbitrary) => ({ arbitrary, weight: 8 }));
  return { valid, backendFail, invalid, unknown };
}
