import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toWire, type AttemptedRollout } from '@agl/core/schema';
import { MemoryStore } from '../memory/memory-store';
import { SqliteStore } from '../sqlite/sqlite-store';
import { decodeRpcStatus } from '../otlp/index';
import { createStoreServer, type StoreServer } from './index';

/** 2000-01-01T00:00:00Z and 2200-01-01T00:00:00Z, the accepted range's edges, in epoch seconds. */
const EARLIEST = 946_684_800;
const LATEST = 7_258_118_400;
/** 2201-01-01T00:00:00Z. */
const YEAR_2201 = 7_289_654_400;
const T0 = 1_700_000_000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-time-bounds-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function post(
  server: StoreServer,
  path: string,
  body: unknown,
): Promise<{ status: number; detail: string; json: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // A string is sent as is: `1e400` is how a JSON body carries a time that parses to Infinity.
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, detail: String(json.detail ?? json.message ?? ''), json };
}

const span = (r: AttemptedRollout, spanId: string, startTime: number, endTime: number) => ({
  rollout_id: r.rolloutId,
  attempt_id: r.attempt.attemptId,
  sequence_id: 1,
  trace_id: 't',
  span_id: spanId,
  parent_id: null,
  name: 'step',
  attributes: {},
  start_time: startTime,
  end_time: endTime,
});

const RANGE = /2000-01-01 … 2200-01-01.*seconds since the epoch/u;

for (const kind of ['memory', 'sqlite'] as const) {
  describe(`${kind}: times outside year 2000–2200 are a 422 naming the field`, () => {
    let store: MemoryStore | SqliteStore;
    let server: StoreServer;
    let r: AttemptedRollout;
    const spanCount = async () => (await store.querySpans({ rolloutId: r.rolloutId })).items.length;

    beforeAll(async () => {
      store = kind === 'memory' ? new MemoryStore() : new SqliteStore({ path: join(dir, `${kind}.sqlite`) });
      server = await createStoreServer({ store, port: 0, closeStore: true });
      r = await store.startRollout({ input: 1 });
    });
    afterAll(async () => {
      await server.close();
    });

    it('the span routes (single and batch) refuse ±1e308, 0, Infinity and year 2201, and store nothing', async () => {
      const before = await spanCount();
      for (const bad of [1e308, -1e308, 0, YEAR_2201, EARLIEST - 1, LATEST + 1]) {
        const single = await post(server, '/v1/agl/spans', span(r, `s-${bad}`, bad, T0));
        expect(single.status).toBe(422);
        expect(single.detail).toContain('span.startTime');
        expect(single.detail).toContain(String(bad));
        expect(single.detail).toMatch(RANGE);
      }
      const infinite = await post(
        server,
        '/v1/agl/spans',
        JSON.stringify(span(r, 's-inf', T0, T0 + 1)).replace(`"end_time":${T0 + 1}`, '"end_time":1e400'),
      );
      expect(infinite.status).toBe(422);
      expect(infinite.detail).toMatch(/end_time.*Infinity/u);

      const batch = await post(server, '/v1/agl/spans/batch', {
        spans: [span(r, 'b0', T0, T0 + 1), span(r, 'b1', T0, T0 + 2), span(r, 'b2', T0, YEAR_2201)],
      });
      expect(batch.status).toBe(422);
      expect(batch.detail).toContain('spans[2].endTime');
      expect(batch.detail).toContain(String(YEAR_2201));
      // Milliseconds are named as the likely mix-up.
      const millis = await post(server, '/v1/agl/spans/batch', { spans: [span(r, 'm0', T0 * 1000, T0 * 1000)] });
      expect(millis.status).toBe(422);
      expect(millis.detail).toMatch(/spans\[0\]\.startTime.*not milliseconds/u);
      expect(await spanCount()).toBe(before);

      // The valid edges (2000-01-01 and 2200-01-01 exactly) and null times are stored.
      const edge = await post(server, '/v1/agl/spans/batch', {
        spans: [span(r, 'e0', EARLIEST, LATEST), { ...span(r, 'e1', T0, T0), start_time: null, end_time: null }],
      });
      expect(edge.status).toBeLessThan(300);
      expect(await spanCount()).toBe(before + 2);
    });

    it("a span event's timestamp outside the range is a 422 naming the event; null and in-range ones are stored", async () => {
      const before = await spanCount();
      const withEvents = (spanId: string, timestamps: Array<number | null>) => ({
        ...span(r, spanId, T0, T0 + 1),
        events: timestamps.map((timestamp, i) => ({ name: `e${i}`, attributes: {}, timestamp })),
      });
      const single = await post(server, '/v1/agl/spans', withEvents('ev-far', [T0, YEAR_2201]));
      expect(single.status).toBe(422);
      expect(single.detail).toContain('span.events[1].timestamp');
      expect(single.detail).toMatch(RANGE);
      const batch = await post(server, '/v1/agl/spans/batch', {
        spans: [withEvents('ev-ok', [T0]), withEvents('ev-ms', [T0 * 1000])],
      });
      expect(batch.status).toBe(422);
      expect(batch.detail).toMatch(/spans\[1\]\.events\[0\]\.timestamp.*not milliseconds/u);
      expect(await spanCount()).toBe(before);
      const ok = await post(server, '/v1/agl/spans/batch', { spans: [withEvents('ev-ok', [T0, null, LATEST])] });
      expect(ok.status).toBeLessThan(300);
      expect(await spanCount()).toBe(before + 1);
    });

    it('POST /v1/agl/records refuses only the record with a bad time, by index', async () => {
      const records = [
        { kind: 'start', rolloutId: 'ro-good', attemptId: 'at-good', input: null, startTime: T0 },
        { kind: 'start', rolloutId: 'ro-far', attemptId: 'at-far', input: null, startTime: 1e308 },
        {
          kind: 'spans',
          spans: [
            {
              rolloutId: 'ro-good',
              attemptId: 'at-good',
              sequenceId: 1,
              traceId: 't',
              spanId: 'rs1',
              parentId: null,
              name: 'llm',
              startTime: YEAR_2201,
              endTime: YEAR_2201 + 1,
            },
          ],
        },
        { kind: 'end', rolloutId: 'ro-good', attemptId: 'at-good', status: 'succeeded', endTime: LATEST + 1 },
        { kind: 'end', rolloutId: 'ro-good', attemptId: 'at-good', status: 'succeeded', endTime: T0 + 5 },
      ];
      const result = await post(server, '/v1/agl/records', {
        records: records.map((record) => toWire('productionRecord', record)),
      });
      expect(result.status).toBe(200);
      const rejected = result.json.rejected as Array<{ index: number; detail: string }>;
      expect(rejected.map((x) => x.index)).toEqual([1, 2, 3]);
      expect(rejected[0]!.detail).toMatch(/startTime.*1e\+308/u);
      expect(rejected[1]!.detail).toMatch(/spans\[0\]\.startTime/u);
      expect(rejected[2]!.detail).toMatch(/endTime/u);
      expect(result.json.applied).toBe(2);
      expect(await store.getRolloutById('ro-far')).toBeNull();
      expect((await store.querySpans({ rolloutId: 'ro-good' })).items).toHaveLength(0);
      const good = await store.getRolloutById('ro-good');
      expect(good).toMatchObject({ startTime: T0, endTime: T0 + 5, status: 'succeeded' });
    });

    it('the rollout and attempt routes refuse bad start, end and heartbeat times', async () => {
      const started = await post(server, '/v1/agl/rollouts', { input: 1, start_time: -1e308 });
      expect(started.status).toBe(422);
      expect(started.detail).toMatch(/startTime.*-1e\+308/u);
      const a = r.attempt.attemptId;
      const ended = await post(server, `/v1/agl/rollouts/${r.rolloutId}/attempts/${a}`, {
        status: 'succeeded',
        end_time: YEAR_2201,
      });
      expect(ended.status).toBe(422);
      expect(ended.detail).toMatch(/endTime/u);
      const beat = await post(server, `/v1/agl/rollouts/${r.rolloutId}/attempts/${a}`, { last_heartbeat_time: 0 });
      expect(beat.status).toBe(422);
      expect(beat.detail).toMatch(/lastHeartbeatTime.*got 0/u);
      expect((await store.getLatestAttempt(r.rolloutId))?.status).not.toBe('succeeded');

      const ok = await post(server, '/v1/agl/rollouts', { input: 2, start_time: EARLIEST });
      expect(ok.status).toBe(201);
      expect(ok.json.start_time).toBe(EARLIEST);
    });

    it('OTLP ingest (JSON and protobuf) refuses spans with a year-2201 time and stores nothing', async () => {
      const before = await spanCount();
      const owner = [
        { key: 'agentlightning.rollout_id', value: { stringValue: r.rolloutId } },
        { key: 'agentlightning.attempt_id', value: { stringValue: r.attempt.attemptId } },
      ];
      const otlpSpan = (spanId: string, start: string) => ({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId,
        name: 'otlp.step',
        kind: 1,
        startTimeUnixNano: start,
        endTimeUnixNano: start,
      });
      const json = await post(server, '/v1/traces', {
        resourceSpans: [
          {
            resource: { attributes: owner },
            scopeSpans: [
              {
                spans: [
                  otlpSpan('b7ad6b7169203331', `${T0}000000000`),
                  otlpSpan('b7ad6b7169203332', `${YEAR_2201}000000000`),
                ],
              },
            ],
          },
        ],
      });
      expect(json.status).toBe(422);
      expect(json.detail).toMatch(/spans\[1\]\.startTime.*7289654400/u);
      expect(await spanCount()).toBe(before);

      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({
          'agentlightning.rollout_id': r.rolloutId,
          'agentlightning.attempt_id': r.attempt.attemptId,
        }),
        spanProcessors: [new SimpleSpanProcessor(exporter)],
      });
      const tracer = provider.getTracer('time-bounds');
      tracer.startSpan('pb.ok', { startTime: [T0, 0] }).end([T0 + 1, 0]);
      tracer.startSpan('pb.far', { startTime: [YEAR_2201, 0] }).end([YEAR_2201 + 1, 0]);
      await provider.forceFlush();
      const body = ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
      await provider.shutdown();
      trace.disable();
      const response = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body,
      });
      expect(response.status).toBe(422);
      const status = decodeRpcStatus(new Uint8Array(await response.arrayBuffer()));
      expect(status.message).toMatch(/spans\[1\]\.startTime.*7289654400/u);
      expect(await spanCount()).toBe(before);
    });
  });
}
