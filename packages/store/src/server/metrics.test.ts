import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '@agl/testing';
import { MemoryStore } from '../memory/memory-store';
import { StoreClient } from '../client/index';
import { createStoreServer, type RequestLogLine, type StoreServer } from './index';

/** `name{labels} value` lines of a Prometheus exposition, as a map. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

describe('store server /metrics and JSON request logs', () => {
  let server: StoreServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it('counts requests per route and status, times them, and reports queue depth, rollouts by status and spans/s', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    server = await createStoreServer({ store, port: 0, clock, closeStore: true });
    const client = new StoreClient({ url: server.url, retryDelays: [], healthRetryDelays: [] });
    const [a] = await client.enqueueRollouts([{ input: 1 }, { input: 2 }, { input: 3 }]);
    const claimed = (await client.dequeueRollout({ workerId: 'w' }))!;
    await client.getRolloutById(a!.rolloutId);
    await client.getRolloutById('ro-missing');
    const bad = await fetch(`${server.url}/v1/agl/queues/rollouts/enqueue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"rollouts": 5}',
    });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    const first = samples(await (await fetch(`${server.url}/metrics`)).text());
    await client.addSpans(
      Array.from({ length: 10 }, (_, i) => ({
        rolloutId: claimed.rolloutId,
        attemptId: claimed.attempt.attemptId,
        sequenceId: i + 1,
        traceId: 't',
        spanId: `s${i}`,
        parentId: null,
        name: 'x',
        startTime: 1_700_000_001,
        endTime: 1_700_000_002,
      })),
    );
    clock.advance(5);
    const response = await fetch(`${server.url}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = samples(await response.text());
    await client.close();

    expect(
      m.get('agl_store_http_requests_total{method="POST",route="/v1/agl/queues/rollouts/enqueue",status="201"}'),
    ).toBe(1);
    expect(m.get('agl_store_http_requests_total{method="GET",route="/v1/agl/rollouts/:rollout_id",status="200"}')).toBe(
      2,
    );
    expect(
      m.get(
        `agl_store_http_requests_total{method="POST",route="/v1/agl/queues/rollouts/enqueue",status="${bad.status}"}`,
      ),
    ).toBe(1);
    const enqueueCount = m.get(
      'agl_store_http_request_duration_seconds_count{method="POST",route="/v1/agl/queues/rollouts/enqueue"}',
    );
    expect(enqueueCount).toBe(2);
    expect(
      m.get(
        'agl_store_http_request_duration_seconds_bucket{method="POST",route="/v1/agl/queues/rollouts/enqueue",le="+Inf"}',
      ),
    ).toBe(2);
    expect(
      m.get('agl_store_http_request_duration_seconds_sum{method="POST",route="/v1/agl/queues/rollouts/enqueue"}'),
    ).toBeGreaterThan(0);
    expect(m.get('agl_store_queue_depth')).toBe(2);
    expect(m.get('agl_store_rollouts{status="queuing"}')).toBe(2);
    expect(m.get('agl_store_rollouts{status="running"}')).toBe(1);
    expect(m.get('agl_store_rollouts{status="succeeded"}')).toBe(0);
    expect(first.get('agl_store_spans_total')).toBe(0);
    expect(m.get('agl_store_spans_total')).toBe(10);
    expect(m.get('agl_store_spans_per_second')).toBe(2);
    expect(m.get('agl_store_http_requests_total{method="GET",route="/metrics",status="200"}')).toBe(1);
  });

  it('keeps /metrics behind the token and writes one JSON log line per request without secrets', async () => {
    const lines: RequestLogLine[] = [];
    server = await createStoreServer({
      store: new MemoryStore(),
      port: 0,
      token: 'tok',
      closeStore: true,
      requestLog: (line) => lines.push(line),
    });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    const ok = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer tok' } });
    expect(ok.status).toBe(200);
    await fetch(`${server.url}/v1/agl/rollouts/ro-x`, { headers: { authorization: 'Bearer tok' } });
    expect(lines.map((l) => [l.method, l.route, l.status, l.level])).toEqual([
      ['GET', '/metrics', 401, 'warn'],
      ['GET', '/metrics', 200, 'info'],
      ['GET', '/v1/agl/rollouts/:rollout_id', 200, 'info'],
    ]);
    expect(lines[0]).toMatchObject({ msg: 'request', url: '/metrics', remote: '127.0.0.1' });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    expect(new Date(lines[0]!.time).toString()).not.toBe('Invalid Date');
    expect(JSON.stringify(lines)).not.toContain('tok');
  });

  it('metrics: false leaves /metrics unrouted', async () => {
    server = await createStoreServer({ store: new MemoryStore(), port: 0, metrics: false, closeStore: true });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });
});
