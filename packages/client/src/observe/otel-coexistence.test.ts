import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer, setAglTracer } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it } from 'vitest';
import { configureObserve, flushObserve, observe, shutdownObserve } from '../index';

/** The app's own OpenTelemetry set-up: a provider registered globally, exporting to memory. */
function appTelemetry(): { provider: NodeTracerProvider; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return { provider, exporter };
}

/** A request of the app: its own spans (through the global API, as apps do) around an LLM call AGL instruments. */
async function handleRequest(): Promise<void> {
  await trace.getTracer('app').startActiveSpan('app.request', async (root) => {
    trace.getTracer('app').startActiveSpan('app.db', (db) => db.end());
    getAglTracer()
      .getTracer('@agl/openai')
      .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
        span.setAttribute('gen_ai.prompt.0.content', 'coexist');
        span.end();
      });
    root.end();
  });
}

describe("AGL next to an app's own OpenTelemetry provider", () => {
  afterEach(async () => {
    await shutdownObserve(1_000);
    trace.disable();
  });

  for (const order of ['AGL first (preload)', 'AGL second'] as const) {
    it(`the app keeps exactly its spans and AGL still records its LLM spans: ${order}`, async () => {
      const store = new MemoryStore();
      setAglTracer(null);
      let app: ReturnType<typeof appTelemetry>;
      if (order === 'AGL first (preload)') {
        getAglTracer();
        configureObserve({ store });
        app = appTelemetry();
      } else {
        app = appTelemetry();
        getAglTracer();
        configureObserve({ store });
      }
      const { rolloutId } = await observe({}, async (rollout) => (await handleRequest(), rollout));
      await flushObserve();
      await app.provider.forceFlush();
      expect(app.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['app.db', 'app.request']);
      const stored = (await store.querySpans({ rolloutId })).items;
      expect(stored.map((s) => s.name)).toEqual([SPAN_CHAT_COMPLETION]);
      // the LLM span still sits in the app's trace (same trace id, under the app's request span)
      const request = app.exporter.getFinishedSpans().find((s) => s.name === 'app.request')!;
      expect(stored[0]!.traceId).toBe(request.spanContext().traceId);
      await app.provider.shutdown();
    });
  }
});
