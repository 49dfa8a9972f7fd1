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
