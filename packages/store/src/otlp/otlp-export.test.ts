import { gzipSync } from 'node:zlib';
import { ROOT_CONTEXT, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as HttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptedRollout } from '@agl/core/schema';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer } from '../server/index';
import { decodeRpcStatus, decodeTraceResponse } from './index';

const TOKEN = 'otlp-token';

/** Real OpenTelemetry SDK 2.x spans, exported by the real OTLP/HTTP exporters to a real server on 127.0.0.1. */
describe('POST /v1/traces with real OTLP exporters', () => {
  const store = new MemoryStore({ scanDebounceSeconds: 0 });
  let server: StoreServer;
  let first: AttemptedRollout;
  let second: AttemptedRollout;

  beforeAll(async () => {
    server = await createStoreServer({ store, port: 0, token: TOKEN });
    first = await store.startRollout({ input: 'a' });
    second = await store.startRollout({ input: 'b' });
  });
  afterAll(async () => {
    await server.close();
    await store.close();
  });

  function provider(exporter: SpanExporter, attributes: Record<string, string>) {
    return new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'otlp-test', ...attributes }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
  }

  function emit(tracer: Tracer, prefix: string, overrideOwner?: AttemptedRollout): void {
    const parent = tracer.startSpan(`${prefix}.agent`, { attributes: { 'agent.name': 'planner' } });
    const inParent = trace.setSpan(ROOT_CONTEXT, parent);
    {
      const child = tracer.startSpan(
        `${prefix}.llm`,
        {
          attributes: {
            'gen_ai.usage.input_tokens': 12,
            'gen_ai.request.temperature': 0.5,
            prompt_token_ids: [1, 2, 3],
            ok: true,
          },
        },
        inParent,
      );
      child.addEvent('gen_ai.choice', { index: 0 });
      child.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
      child.end();
      if (overrideOwner) {
        const moved = tracer.startSpan(
          `${prefix}.moved`,
          {
            attributes: {
              'agentlightning.rollout_id': overrideOwner.rolloutId,
              'agentlightning.attempt_id': overrideOwner.attempt.attemptId,
            },
          },
          inParent,
        );
        moved.end();
      }
      parent.end();
    }
  }

  async function spansOf(rollout: AttemptedRollout, prefix: string) {
    const page = await store.querySpans({ rolloutId: rollout.rolloutId, nameContains: prefix });
    return Object.fromEntries(page.items.map((span) => [span.name, span]));
  }

  for (const [label, makeExporter] of [
    [
      'protobuf (exporter-trace-otlp-proto, gzip)',
      () =>
        new ProtoExporter({
          url: server.otlpTracesEndpoint(),
          headers: { Authorization: `Bearer ${TOKEN}` },
          compression: 'gzip' as never,
        }),
    ],
    [
      'JSON (exporter-trace-otlp-http)',
      () => new HttpJsonExporter({ url: server.otlpTracesEndpoint(), headers: { Authorization: `Bearer ${TOKEN}` } }),
    ],
  ] as const) {
    it(`${label}: spans land in the store with ownership, hierarchy, attributes, events and status`, async () => {
      const prefix = label.startsWith('protobuf') ? 'pb' : 'json';
      const before = Date.now() / 1000;
      const tp = provider(makeExporter(), {
        'agentlightning.rollout_id': first.rolloutId,
        'agentlightning.attempt_id': first.attempt.attemptId,
      });
      emit(tp.getTracer('otlp-test'), prefix, second);
      await tp.forceFlush();
      await tp.shutdown();
      const after = Date.now() / 1000;

      const spans = await spansOf(first, prefix);
      expect(Object.keys(spans).sort()).toEqual([`${prefix}.agent`, `${prefix}.llm`]);
      const agent = spans[`${prefix}.agent`]!;
      const llm = spans[`${prefix}.llm`]!;
      expect(llm.parentId).toBe(agent.spanId);
      expect(llm.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(llm.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(llm.traceId).toBe(agent.traceId);
      expect(agent.parentId).toBeNull();
      expect(llm.attributes).toMatchObject({
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.request.temperature': 0.5,
        prompt_token_ids: [1, 2, 3],
        ok: true,
      });
      expect(llm.status).toEqual({ statusCode: 'ERROR', description: 'rate limited' });
      expect(llm.events.map((e) => e.name)).toEqual(['gen_ai.choice']);
      // Times are Unix seconds of the wall clock around the export (a ms, µs or ns mix-up is off by 10^3 or more).
      for (const time of [agent.startTime, agent.endTime, llm.startTime, llm.endTime, llm.events[0]!.timestamp]) {
        expect(time).toBeGreaterThanOrEqual(before - 2);
        expect(time).toBeLessThanOrEqual(after + 2);
      }
      expect(llm.endTime).toBeGreaterThanOrEqual(llm.startTime!);
      expect(agent.endTime).toBeGreaterThanOrEqual(llm.endTime!);
      expect(llm.resource.attributes['service.name']).toBe('otlp-test');
      expect(llm.sequenceId).toBeGreaterThan(0);
      expect(llm.context).toEqual({ traceId: llm.traceId, spanId: llm.spanId, isRemote: false, traceState: {} });
      // span-level ownership wins over the resource's
      const moved = await spansOf(second, prefix);
      expect(Object.keys(moved)).toEqual([`${prefix}.moved`]);
      // a span is a heartbeat: the attempt is running now
      expect((await store.getLatestAttempt(first.rolloutId))?.status).toBe('running');
    });
  }

  it('a Python-style sender configured only by environment variables (endpoint, bearer header) is accepted', async () => {
    const saved = { ...process.env };
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = server.otlpTracesEndpoint();
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer%20${TOKEN}`;
    try {
      const tp = provider(new ProtoExporter(), {
        'agentlightning.rollout_id': second.rolloutId,
        'agentlightning.attempt_id': second.attempt.attemptId,
      });
      tp.getTracer('env').startSpan('env.span').end();
      await tp.forceFlush();
      await tp.shutdown();
    } finally {
      process.env = saved;
    }
    expect(Object.keys(await spansOf(second, 'env.'))).toEqual(['env.span']);
  });

  async function protobufExport(attributes: Record<string, string>, names: string[]): Promise<Uint8Array> {
    const memory = new InMemorySpanExporter();
    const tp = provider(memory, attributes);
    const tracer = tp.getTracer('raw');
    for (const name of names) tracer.startSpan(name).end();
    await tp.forceFlush();
    return ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!;
  }

  it('spans without an owner or for an unknown rollout are counted in partialSuccess; the rest are stored (200)', async () => {
    const owned = await protobufExport(
      { 'agentlightning.rollout_id': first.rolloutId, 'agentlightning.attempt_id': first.attempt.attemptId },
      ['raw.kept'],
    );
    const unowned = await protobufExport({}, ['raw.orphan-1', 'raw.orphan-2']);
    const unknown = await protobufExport(
      { 'agentlightning.rollout_id': 'ro-unknown', 'agentlightning.attempt_id': 'at-x' },
      ['raw.unknown'],
    );
    for (const [body, rejected, message] of [
      [owned, 0, null],
      [unowned, 2, /no agentlightning.rollout_id/],
      [unknown, 1, /unknown rollout ro-unknown/],
    ] as const) {
      const response = await fetch(server.otlpTracesEndpoint(), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-protobuf',
          authorization: `Bearer ${TOKEN}`,
          'accept-encoding': 'identity',
        },
        body: Buffer.from(body),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/x-protobuf');
      const decoded = decodeTraceResponse(new Uint8Array(await response.arrayBuffer())) as {
        partialSuccess?: { rejectedSpans: number; errorMessage: string };
      };
      if (rejected === 0) expect(decoded.partialSuccess).toBeUndefined();
      else {
        expect(decoded.partialSuccess?.rejectedSpans).toBe(rejected);
        expect(decoded.partialSuccess?.errorMessage).toMatch(message!);
      }
    }
    expect(Object.keys(await spansOf(first, 'raw.'))).toEqual(['raw.kept']);
  });

  it('gzip bodies are accepted and the answer is gzipped when asked', async () => {
    const body = gzipSync(
      await protobufExport(
        { 'agentlightning.rollout_id': first.rolloutId, 'agentlightning.attempt_id': first.attempt.attemptId },
        ['gz.one'],
      ),
    );
    const response = await fetch(server.otlpTracesEndpoint(), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-protobuf',
        'content-encoding': 'gzip',
        'accept-encoding': 'gzip',
        authorization: `Bearer ${TOKEN}`,
      },
      body,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(Object.keys(await spansOf(first, 'gz.'))).toEqual(['gz.one']);
  });

  it('bad content type, unparseable body, missing token and other signals get their status', async () => {
    const post = (headers: Record<string, string>, body: string | Buffer, path = '/v1/traces') =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'accept-encoding': 'identity', ...headers },
        body,
      });
    const text = await post({ 'content-type': 'text/plain' }, 'hello');
    expect(text.status).toBe(415);
    expect(((await text.json()) as { message: string }).message).toMatch(/Unsupported Content-Type 'text\/plain'/);
    const garbage = await post({ 'content-type': 'application/x-protobuf' }, Buffer.from([0xff, 0xff, 0xff, 0xff]));
    expect(garbage.status).toBe(400);
    expect(decodeRpcStatus(new Uint8Array(await garbage.arrayBuffer())).message).toMatch(
      /Unable to parse OTLP traces payload/,
    );
    const badJson = await post(
      { 'content-type': 'application/json' },
      '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}',
    );
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { detail: string }).detail).toMatch(/traceId "xyz" is not a hex string/);
    const noToken = await fetch(server.otlpTracesEndpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noToken.status).toBe(401);
    expect((await post({ 'content-type': 'application/json' }, '{}')).status).toBe(200);
    expect((await post({ 'content-type': 'application/x-protobuf' }, '', '/v1/metrics')).status).toBe(501);
    expect((await post({ 'content-type': 'application/x-protobuf' }, '', '/v1/logs')).status).toBe(501);
  });
});
