import fc from 'fast-check';
import { encodeTraceRequest } from './otlp-bytes';
import type { FuzzRequest } from './fuzz-http';
import { concreteUrl, type RouteEntry } from './route-table';

/** What the generators know about the server under test. */
export interface StoreFuzzContext {
  token: string;
  /** Started rollouts (each with its attempt) that valid span and event requests write to. */
  owners: { rolloutId: string; attemptId: string }[];
  routes: RouteEntry[];
}

const P = '/v1/agl';
const JSON_TYPE = 'application/json';
const WRONG_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'text/xml',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
];
const TRAVERSAL = [
  '../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '..\\..\\windows\\win.ini',
  'a%00b',
  '%00',
  '....//....//',
  '%252e%252e%252f',
  '/etc/passwd',
  '.',
  '..',
  '~root',
  '%',
  '%zz',
  '%E2%80%AE',
  'ro-1?x=1',
  'ro-1#frag',
  ';',
  'x'.repeat(10_000),
];

/** Small JSON values that every JSON field accepts. */
const smallJson = fc.jsonValue({ maxDepth: 2 }).filter((v) => JSON.stringify(v) !== undefined);
const attrValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
);
const attributes = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), attrValue, { maxKeys: 4 });

/** A generator and how often fc.oneof picks it. */
export interface Weighted {
  arbitrary: fc.Arbitrary<FuzzRequest>;
  weight: number;
}

/** Generators of big bodies are picked rarely, to keep the run fast. */
const rare = (arbitrary: fc.Arbitrary<FuzzRequest>): Weighted => ({ arbitrary, weight: 1 });
const weighted = (list: (fc.Arbitrary<FuzzRequest> | Weighted)[]): Weighted[] =>
  list.map((a) => ('weight' in a ? a : { arbitrary: a, weight: 10 }));

function post(path: string, body: unknown, auth: string, kind: string, expect: FuzzRequest['expect']): FuzzRequest {
  return {
    method: 'POST',
    path,
    headers: { 'content-type': JSON_TYPE, authorization: auth },
    body: JSON.stringify(body),
    expect,
    kind,
  };
}

/**
 * A rare enqueue of one rollout whose `input` is its one character repeated `length.min` to `length.max` times (the
 * rest of `rollout` as given), which the store must refuse.
 */
function hugeEnqueue(
  length: { min: number; max: number },
  auth: string,
  kind: string,
  rollout: { input: string } & Record<string, unknown>,
): Weighted {
  return rare(
    fc
      .integer(length)
      .map((n) =>
        post(
          `${P}/queues/rollouts/enqueue`,
          { rollouts: [{ ...rollout, input: rollout.input.repeat(n) }] },
          auth,
          kind,
          'reject',
        ),
      ),
  );
}

/** Builds the store generators for one server. */
export function storeArbitraries(ctx: StoreFuzzContext) {
  const auth = `Bearer ${ctx.token}`;
  const owner = fc.constantFrom(...ctx.owners);
  const id = fc.oneof(
    fc.constantFrom(...ctx.owners.map((o) => o.rolloutId)),
    fc.constantFrom(...TRAVERSAL),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    fc.string({ minLength: 1, maxLength: 20 }),
  );
  const enqueueItem = fc.record(
    {
      input: smallJson,
      mode: fc.constantFrom('train', 'val', 'test'),
      metadata: fc.dictionary(fc.string({ maxLength: 10 }), smallJson, { maxKeys: 3 }),
      config: fc.record(
        {
          max_attempts: fc.integer({ min: 1, max: 3 }),
          retry_condition: fc.subarray(['failed', 'timeout', 'unresponsive']),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['input'] },
  );
  const span = (o: { rolloutId: string; attemptId: string }, spanId: string, attrs: Record<string, unknown>) => ({
    rollout_id: o.rolloutId,
    attempt_id: o.attemptId,
    sequence_id: 1,
    trace_id: `t-${spanId}`,
    span_id: spanId,
    parent_id: null,
    name: 'fuzz',
    attributes: attrs,
    start_time: 1_700_000_001,
    end_time: 1_700_000_002,
  });
  // `echo: false` (what StoreClient sends) takes the route's attribute-text path into SQLite; without it, the usual parse.
  const spanBatch = fc.tuple(
    owner,
    fc.array(fc.tuple(fc.uuid(), attributes), { minLength: 1, maxLength: 4 }),
    fc.constantFrom({}, { echo: false }),
  );
  const validEnqueueBody = fc.array(enqueueItem, { minLength: 1, maxLength: 3 }).map((rollouts) => ({ rollouts }));

  const valid = weighted([
    validEnqueueBody.map((b) => post(`${P}/queues/rollouts/enqueue`, b, auth, 'valid-enqueue', 'accept')),
    enqueueItem.map((b) => post(`${P}/rollouts`, b, auth, 'valid-start', 'accept')),
    spanBatch.map(([o, items, echo]) =>
      post(
        `${P}/spans/batch`,
        { spans: items.map(([sid, a]) => span(o, sid, a)), ...echo },
        auth,
        'valid-spans',
        'accept',
      ),
    ),
    fc
      .tuple(owner, fc.uuid(), attributes)
      .map(([o, sid, a]) => post(`${P}/spans`, span(o, sid, a), auth, 'valid-span', 'accept')),
    fc
      .record({ limit: fc.integer({ min: 0, max: 3 }), worker_id: fc.constantFrom('w-1', 'w-2') })
      .map((b) => post(`${P}/queues/rollouts/dequeue`, b, auth, 'valid-dequeue', 'accept')),
    fc
      .tuple(owner, fc.double({ min: -10, max: 10, noNaN: true }))
      .map(([o, value]) =>
        post(
          `/api/rollouts/${o.rolloutId}/attempt/${o.attemptId}/events`,
          { event_type: 'reward', data: { value } },
          auth,
          'valid-event',
          'accept',
        ),
      ),
    fc
      .string({ maxLength: 40 })
      .map((template) =>
        post(
          `${P}/resources`,
          { prompt: { resource_type: 'prompt_template', template, engine: 'f-string' } },
          auth,
          'valid-resources',
          'accept',
        ),
      ),
    fc
      .tuple(owner, fc.integer({ min: 1, max: 5 }))
      .map(([o, limit]) =>
        post(`${P}/spans/search`, { rollout_id: o.rolloutId, limit }, auth, 'valid-span-query', 'accept'),
      ),
    fc.constantFrom('status_in=queuing&limit=2', 'limit=1&offset=1', 'sort_by=start_time&sort_order=desc').map((q) => ({
      method: 'GET',
      path: `${P}/rollouts?${q}`,
      headers: { authorization: auth },
      expect: 'accept' as const,
      kind: 'valid-get',
    })),
    fc
      .tuple(owner, fc.array(fc.tuple(fc.uuid(), fc.string({ maxLength: 10 })), { minLength: 1, maxLength: 3 }))
      .map(([o, items]) => ({
        method: 'POST',
        path: '/v1/traces',
        headers: { 'content-type': 'application/x-protobuf', authorization: auth },
        body: encodeTraceRequest(
          { 'agentlightning.rollout_id': o.rolloutId, 'agentlightning.attempt_id': o.attemptId },
          items.map(([u, v]) => ({
            traceId: Buffer.from(u.replace(/-/g, ''), 'hex'),
            spanId: Buffer.from(u.replace(/-/g, '').slice(0, 16), 'hex'),
            name: 'otlp-fuzz',
            attributes: { v },
          })),
        ),
        expect: 'accept' as const,
        kind: 'valid-otlp',
      })),
  ]);

  const wrongType = fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 5 }),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.object({ maxDepth: 1 }),
  );
  const invalid = weighted([
    // Wrong types in required or enum fields.
    fc
      .tuple(
        enqueueItem,
        fc.constantFrom('mode', 'config', 'metadata'),
        fc.oneof(fc.integer(), fc.constant('bogus'), fc.array(fc.integer(), { minLength: 1 })),
      )
      .map(([item, key, value]) =>
        post(
          `${P}/queues/rollouts/enqueue`,
          { rollouts: [{ ...item, [key]: value }] },
          auth,
          'enqueue-wrong-type',
          'reject',
        ),
      ),
    wrongType
      .filter((v) => !Array.isArray(v))
      .map((rollouts) => post(`${P}/queues/rollouts/enqueue`, { rollouts }, auth, 'enqueue-not-array', 'reject')),
    fc
      .tuple(
        validEnqueueBody,
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'rollouts'),
      )
      .map(([b, key]) =>
        post(`${P}/queues/rollouts/enqueue`, { ...b, [key]: 1 }, auth, 'enqueue-unknown-key', 'reject'),
      ),
    fc
      .tuple(
        spanBatch,
        fc.constantFrom('start_time', 'rollout_id', 'span_id', 'attributes', 'sequence_id'),
        fc.constantFrom([1], true),
      )
      .map(([[o, items, echo], key, value]) =>
        post(
          `${P}/spans/batch`,
          { spans: items.map(([sid, a]) => ({ ...span(o, sid, a), [key]: value })), ...echo },
          auth,
          'spans-wrong-type',
          'reject',
        ),
      ),
    fc
      .tuple(
        fc.constantFrom(
          `${P}/queues/rollouts/enqueue`,
          `${P}/spans/batch`,
          `${P}/spans`,
          `${P}/resources`,
          `${P}/rollouts`,
        ),
        fc.constantFrom('[]', '1', '"s"', 'null', 'true', '[{}]'),
      )
      .map(([path, text]) => ({
        method: 'POST',
        path,
        headers: { 'content-type': JSON_TYPE, authorization: auth },
        body: text,
        expect: 'reject' as const,
        kind: 'not-an-object',
      })),
    fc.tuple(validEnqueueBody, fc.nat()).map(([b, cut]) => {
      const text = JSON.stringify(b);
      const truncated = text.slice(0, 1 + (cut % (text.length - 1)));
      return {
        method: 'POST',
        path: `${P}/queues/rollouts/enqueue`,
        headers: { 'content-type': JSON_TYPE, authorization: auth },
        body: truncated,
        expect: 'reject' as const,
        kind: 'truncated-json',
      };
    }),
    fc.tuple(validEnqueueBody, fc.constantFrom(...WRONG_TYPES)).map(([b, type]) => ({
      method: 'POST',
      path: `${P}/queues/rollouts/enqueue`,
      headers: { 'content-type': type, authorization: auth },
      body: JSON.stringify(b),
      expect: 'reject' as const,
      kind: 'wrong-content-type',
    })),
    fc.constantFrom(...WRONG_TYPES).map((type) => ({
      method: 'POST',
      path: '/v1/traces',
      headers: { 'content-type': type, authorization: auth },
      body: 'x',
      expect: 'reject' as const,
      kind: 'otlp-wrong-content-type',
    })),
    fc
      .tuple(
        fc.constantFrom(...ctx.routes.filter((r) => r.url !== `${P}/health`)),
        fc.constantFrom(undefined, `Bearer ${ctx.token}-`, 'Bearer', ctx.token, `Bearer ${'A'.repeat(4000)}`),
      )
      .map(([route, authorization]) => ({
        method: route.method,
        path: concreteUrl(route.url),
        headers: (authorization === undefined ? {} : { authorization }) as Record<string, string>,
        expect: 'reject' as const,
        kind: 'bad-token',
      })),
    hugeEnqueue({ min: 1_100_000, max: 1_600_000 }, auth, 'huge-over-limit', { input: 'x' }),
  ]);

  const anyBody = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
    fc.string({ maxLength: 200 }),
    fc.constant(''),
  );
  const nested = (depth: number, kind: 'array' | 'object'): string =>
    kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const unknown = weighted([
    fc
      .tuple(
        fc.constantFrom(...ctx.routes),
        id,
        id,
        anyBody,
        fc.constantFrom(JSON_TYPE, 'application/json; charset=utf-8', ...WRONG_TYPES),
      )
      .map(([route, a, b, body, type]) => {
        const path = route.url
          .replace(':rollout_id', a)
          .replace(/:[a-z_]+/g, b)
          .replace(/\*$/, a);
        const hasBody = route.method === 'POST';
        return {
          method: route.method,
          path,
          headers: { authorization: auth, ...(hasBody ? { 'content-type': type } : {}) },
          body: hasBody ? body : undefined,
          expect: 'any' as const,
          kind: 'random-route',
        };
      }),
    fc
      .tuple(
        fc.constantFrom(...ctx.routes.filter((r) => r.method === 'GET')),
        fc.dictionary(
          fc.constantFrom('limit', 'offset', 'status_in', 'sort_by', 'sort_order', 'rollout_id', 'filter_logic', 'x'),
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer().map(String)),
        ),
      )
      .map(([route, query]) => ({
        method: 'GET',
        path: `${concreteUrl(route.url)}?${new URLSearchParams(query).toString()}`,
        headers: { authorization: auth },
        expect: 'any' as const,
        kind: 'random-query',
      })),
    fc
      .tuple(fc.integer({ min: 100, max: 60_000 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([depth, shape]) => ({
        method: 'POST',
        path: `${P}/queues/rollouts/enqueue`,
        headers: { 'content-type': JSON_TYPE, authorization: auth },
        body: `{"rollouts":[{"input":${nested(depth, shape)}}]}`,
        expect: 'any' as const,
        kind: 'deep-nesting',
      })),
    fc.tuple(owner, fc.integer({ min: 100, max: 60_000 })).map(([o, depth]) => ({
      method: 'POST',
      path: `${P}/spans`,
      headers: { 'content-type': JSON_TYPE, authorization: auth },
      body: JSON.stringify({ ...span(o, `deep-${depth}`, {}), events: '@' }).replace(
        '"@"',
        `[{"name":"e","attributes":{"k":${nested(depth, 'array')}},"timestamp":1}]`,
      ),
      expect: 'any' as const,
      kind: 'deep-span',
    })),
    fc
      .tuple(fc.integer({ min: 100, max: 60_000 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([depth, shape]) => ({
        method: 'POST',
        path: '/v1/traces',
        headers: { 'content-type': JSON_TYPE, authorization: auth },
        body: `{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":${nested(depth, shape)}}]}}]}`,
        expect: 'any' as const,
        kind: 'deep-otlp-json',
      })),
    // Parsed in full, then refused (mode): stored huge inputs would slow every later query of the run.
    hugeEnqueue({ min: 100_000, max: 900_000 }, auth, 'huge-string', { input: 'y', mode: 5 }),
    fc
      .tuple(
        fc.array(fc.tuple(fc.uuid(), fc.string({ maxLength: 10 })), { minLength: 1, maxLength: 3 }),
        fc.nat(),
        fc.boolean(),
      )
      .map(([items, cut, fakeOwner]) => {
        const bytes = encodeTraceRequest(
          fakeOwner ? { 'agentlightning.rollout_id': 'ro-does-not-exist', 'agentlightning.attempt_id': 'at-nope' } : {},
          items.map(([u, v]) => ({
            traceId: Buffer.from(u.replace(/-/g, ''), 'hex'),
            spanId: Buffer.from(u.replace(/-/g, '').slice(0, 16), 'hex'),
            name: 'cut',
            attributes: { v },
          })),
        );
        return {
          method: 'POST',
          path: '/v1/traces',
          headers: { 'content-type': 'application/x-protobuf', authorization: auth },
          body: bytes.slice(0, cut % bytes.length),
          expect: 'any' as const,
          kind: 'truncated-protobuf',
        };
      }),
    fc
      .tuple(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom('application/x-protobuf', 'application/json'),
        fc.constantFrom('identity', 'gzip', 'br'),
      )
      .map(([bytes, type, encoding]) => ({
        method: 'POST',
        path: '/v1/traces',
        headers: { 'content-type': type, 'content-encoding': encoding, authorization: auth },
        body: bytes,
        expect: 'any' as const,
        kind: 'garbage-otlp',
      })),
  ]);
  return { valid, invalid, unknown };
}
