import { ROOT_CONTEXT, SpanKind, trace, type Attributes, type Context, type Tracer } from '@opentelemetry/api';

/** One span of a synthetic trace (for OTLP tests that mimic another framework's export): name, kind, attributes, optional span events, children (in start order). */
export interface SpanSpec {
  name: string;
  kind: SpanKind;
  attributes: Attributes;
  events?: { name: string; attributes: Attributes }[];
  children?: SpanSpec[];
}

/**
 * Emits a span tree through a real OpenTelemetry tracer. Start times are 1 ms apart from `startMs`, in pre-order, and
 * each span ends after its children, as a real run would; returns the next free start time.
 */
export function emitSpanTree(
  tracer: Tracer,
  specs: readonly SpanSpec[],
  startMs = Date.now(),
  parent: Context = ROOT_CONTEXT,
): number {
  let t = startMs;
  for (const spec of specs) {
    const span = tracer.startSpan(spec.name, { kind: spec.kind, attributes: spec.attributes, startTime: t }, parent);
    t += 1;
    for (const event of spec.events ?? []) span.addEvent(event.name, event.attributes, t);
    t = emitSpanTree(tracer, spec.children ?? [], t, trace.setSpan(parent, span));
    span.end(t);
    t += 1;
  }
  return t;
}

export { SpanKind };

/** An OpenTelemetry SDK tracer provider (`BasicTracerProvider`): @agl/testing names only what it uses of one. */
export interface FlushableTracerProvider {
  getTracer(name: string, version?: string): Tracer;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * The resource attributes a Python agent's OTLP export carries (from `OTEL_RESOURCE_ATTRIBUTES`): its service name,
 * and the rollout and attempt the runner gave it.
 */
export function rolloutResourceAttributes(
  serviceName: string,
  rollout: { rolloutId: string; attempt: { attemptId: string } },
): Attributes {
  return {
    'service.name': serviceName,
    'agentlightning.rollout_id': rollout.rolloutId,
    'agentlightning.attempt_id': rollout.attempt.attemptId,
  };
}

/**
 * One whole export, the way a Python process ends: emits the span tree through the provider's tracer named `scope`,
 * flushes it out and shuts the provider down.
 */
export async function exportSpanTree(
  provider: FlushableTracerProvider,
  scope: { name: string; version: string },
  specs: readonly SpanSpec[],
): Promise<void> {
  emitSpanTree(provider.getTracer(scope.name, scope.version), specs);
  await provider.forceFlush();
  await provider.shutdown();
}
