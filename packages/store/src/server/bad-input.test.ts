import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSpan } from '../__fixtures__/test-records';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer } from './index';

/** Bad input over real HTTP: each mistake gets its 4xx, a `{detail, error_type}` naming the field, and no change. */
describe('bad input gets a 4xx with a helpful detail and leaves the store unchanged', () => {
  const TOKEN = 's3cret-token';
  const store = new MemoryStore({ scanDebounceSeconds: 0 });
  let server: StoreServer;
  let rolloutId = '';
  let attemptId = '';

  /** A wire span of trace `t` without times. */
  const wireSpan = (rollout: string, attempt: string, sequence: number, span: string, name = 'n') => ({
    rollout_id: rollout,
    attempt_id: attempt,
    sequence_id: sequence,
    trace_id: 't',
    span_id: span,
    parent_id: null,
    name,
    start_time: null,
    end_time: null,
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const merged: Record<string, string> = { authorization: `Bearer ${TOKEN}`, ...headers };
    if (merged.authorization === '') delete merged.authorization;
    const init: RequestInit = { method, headers: merged };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${server.url}${path}`, init);
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? null : (JSON.parse(text) as { detail: string; error_type: string }),
    };
  };

  const snapshot = async () => {
    const rollouts = await call('GET', '/v1/agl/rollouts');
    const spans = await call('GET', `/v1/agl/spans?rollout_id=${rolloutId}`);
    const stats = (await call('GET', '/v1/agl/statistics')).body as unknown as Record<string, unknown>;
    delete stats.uptime;
    return { rollouts: rollouts.body, spans: spans.body, stats };
  };

  beforeAll(async () => {
    server = await createStoreServer({ store, port: 0, token: TOKEN, bodyLimit: 4096 });
    const started = await store.startRollout({ input: { q: 1 }, workerId: 'w1' });
    rolloutId = started.rolloutId;
    attemptId = started.attempt.attemptId;
    await store.addSpan(testSpan(rolloutId, attemptId, { name: 'first' }));
    await store.updateAttempt(rolloutId, attemptId, { status: 'succeeded' });
  });
  afterAll(async () => {
    await server.close();
    await store.close();
  });

  const cases: Array<{
    name: string;
    request: () => [string, string, unknown?, Record<string, string>?];
    status: number;
    errorType: string;
    detail: RegExp;
  }> = [
    {
      name: 'malformed JSON',
      request: () => ['POST', '/v1/agl/queues/rollouts/enqueue', '{"rollouts": [', {}],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /Malformed JSON body.*valid JSON/,
    },
    {
      name: 'wrong type (string for an int)',
      request: () => [
        'POST',
        '/v1/agl/queues/rollouts/enqueue',
        { rollouts: [{ input: 1, config: { max_attempts: 'three' } }] },
      ],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /rollouts\.0\.config\.max_attempts: .*number/,
    },
    {
      name: 'missing required field',
      request: () => ['POST', '/v1/agl/queues/rollouts/enqueue', {}],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /rollouts: required field is missing/,
    },
    {
      name: 'unknown enum value in a query',
      request: () => ['POST', '/v1/agl/rollouts/search', { status_in: ['done'] }],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /status_in\.0: .*queuing/,
    },
    {
      name: 'unknown enum value in an update',
      request: () => ['POST', `/v1/agl/rollouts/${rolloutId}`, { status: 'finished' }],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /status: .*succeeded/,
    },
    {
      name: 'unknown field in an update',
      request: () => ['POST', `/v1/agl/rollouts/${rolloutId}`, { sttatus: 'failed' }],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /sttatus.*remove it/,
    },
    {
      name: 'bad filter_logic',
      request: () => ['GET', '/v1/agl/rollouts?filter_logic=xor'],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /filter_logic/,
    },
    {
      name: 'sort_by not a field',
      request: () => ['GET', '/v1/agl/rollouts?sort_by=nonexistent_field'],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /Invalid sort_by: nonexistent_field, allowed fields are: rollout_id/,
    },
    {
      name: 'limit 0',
      request: () => ['GET', '/v1/agl/rollouts?limit=0'],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /limit: Limit must be greater than 0 or -1/,
    },
    {
      name: 'negative offset',
      request: () => ['POST', '/v1/agl/workers/search', { offset: -1 }],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /offset: Offset must be greater than or equal to 0/,
    },
    {
      name: 'null status on update_rollout',
      request: () => ['POST', `/v1/agl/rollouts/${rolloutId}`, { status: null }],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /status is invalid; it cannot be a null value/,
    },
    {
      name: 'null worker_id on update_attempt',
      request: () => ['POST', `/v1/agl/rollouts/${rolloutId}/attempts/${attemptId}`, { worker_id: null }],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /worker_id is invalid; it cannot be a null value/,
    },
    {
      name: 'null heartbeat_stats',
      request: () => ['POST', '/v1/agl/workers/w1', { heartbeat_stats: null }],
      status: 400,
      errorType: 'AGL_ValidationError',
      detail: /heartbeat_stats is invalid/,
    },
    {
      name: 'span missing ids',
      request: () => ['POST', '/v1/agl/spans', { name: 'x' }],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /rollout_id/,
    },
    {
      name: 'oversize body',
      request: () => ['POST', '/v1/agl/queues/rollouts/enqueue', { rollouts: [{ input: 'x'.repeat(10_000) }] }],
      status: 413,
      errorType: 'AGL_PayloadTooLargeError',
      detail: /larger than this route's limit of 4096 bytes.*--body-limit/,
    },
    {
      name: 'wrong content type',
      request: () => ['POST', '/v1/agl/queues/rollouts/enqueue', 'rollouts=1', { 'content-type': 'text/plain' }],
      status: 415,
      errorType: 'AGL_UnsupportedMediaTypeError',
      detail: /Content-Type: application\/json/,
    },
    {
      name: 'missing token',
      request: () => ['GET', '/v1/agl/rollouts', undefined, { authorization: '' }],
      status: 401,
      errorType: 'AGL_AuthenticationError',
      detail: /Missing Authorization header.*Bearer/,
    },
    {
      name: 'wrong token',
      request: () => [
        'POST',
        '/v1/agl/queues/rollouts/enqueue',
        { rollouts: [{ input: 1 }] },
        { authorization: 'Bearer nope' },
      ],
      status: 401,
      errorType: 'AGL_AuthenticationError',
      detail: /Invalid bearer token/,
    },
    {
      name: 'unknown rollout on update_rollout',
      request: () => ['POST', '/v1/agl/rollouts/ro-missing', { status: 'failed' }],
      status: 404,
      errorType: 'AGL_NotFoundError',
      detail: /ro-missing/,
    },
    {
      name: 'unknown rollout on start_attempt',
      request: () => ['POST', '/v1/agl/rollouts/ro-missing/attempts'],
      status: 404,
      errorType: 'AGL_NotFoundError',
      detail: /ro-missing/,
    },
    {
      name: 'unknown attempt on update_attempt',
      request: () => ['POST', `/v1/agl/rollouts/${rolloutId}/attempts/at-missing`, { status: 'failed' }],
      status: 404,
      errorType: 'AGL_NotFoundError',
      detail: /at-missing/,
    },
    {
      name: 'invalid span in a batch (named in wire spelling, nothing of the batch stored)',
      request: () => [
        'POST',
        '/v1/agl/spans/batch',
        {
          spans: [wireSpan(rolloutId, attemptId, 2, 's-ok', 'ok'), wireSpan(rolloutId, attemptId, -1, 's-bad', 'bad')],
        },
      ],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /spans\.1\.sequence_id/,
    },
    {
      name: 'batch span for an unknown attempt (nothing of the batch stored)',
      request: () => [
        'POST',
        '/v1/agl/spans/batch',
        {
          spans: [wireSpan(rolloutId, attemptId, 3, 's-ok2', 'ok'), wireSpan(rolloutId, 'at-missing', 4, 's-x')],
        },
      ],
      status: 404,
      errorType: 'AGL_NotFoundError',
      detail: /at-missing/,
    },
    {
      name: 'span for an unknown rollout',
      request: () => ['POST', '/v1/agl/spans', wireSpan('ro-missing', 'at-x', 1, 's9')],
      status: 404,
      errorType: 'AGL_NotFoundError',
      detail: /ro-missing/,
    },
    {
      name: 'event for an unknown rollout',
      request: () => [
        'POST',
        '/api/rollouts/ro-missing/attempt/0/events',
        { event_type: 'reward', data: { value: 1 } },
      ],
      status: 404,
      errorType: 'AGL_NotFoundError',
      detail: /ro-missing/,
    },
    {
      name: 'reward event without a number',
      request: () => [
        'POST',
        `/api/rollouts/${rolloutId}/attempt/latest/events`,
        { event_type: 'reward', data: { value: 'high' } },
      ],
      status: 422,
      errorType: 'AGL_ValidationError',
      detail: /data\.value/,
    },
    {
      name: 'illegal transition',
      request: () => ['POST', `/v1/agl/rollouts/${rolloutId}/attempts/latest`, { status: 'running' }],
      status: 409,
      errorType: 'AGL_InvalidTransitionError',
      detail: /"succeeded" → "running"/,
    },
    {
      name: 'unknown route',
      request: () => ['GET', '/v1/agl/nothing-here'],
      status: 404,
      errorType: 'AGL_RouteNotFoundError',
      detail: /Not Found: GET \/v1\/agl\/nothing-here/,
    },
  ];

  for (const c of cases) {
    it(`${c.name} → ${c.status}`, async () => {
      const before = await snapshot();
      const [method, path, body, headers] = c.request();
      const response = await call(method, path, body, headers);
      expect(response.status).toBe(c.status);
      expect(response.body?.error_type).toBe(c.errorType);
      expect(response.body?.detail).toMatch(c.detail);
      expect(await snapshot()).toEqual(before);
    });
  }

  it('the health route stays open without a token; everything else needs it', async () => {
    expect((await fetch(`${server.url}/v1/agl/health`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/agl/statistics`)).status).toBe(401);
    expect((await fetch(`${server.url}/v1/traces`, { method: 'POST' })).status).toBe(401);
    expect((await call('GET', '/v1/agl/statistics')).status).toBe(200);
  });
});
