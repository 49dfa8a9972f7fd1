import { SpanStatusCode, type HrTime, type SpanContext as OtelSpanContext } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { cleanAttributes } from '../transitions/otel-attributes';
import type { SpanContext, SpanInput } from '../schema/index';

/**
 * Now, in epoch milliseconds with sub-millisecond precision and monotonic (`performance.timeOrigin +
 * performance.now()`).
 *
 * The OTel SDK starts a span at `Date.now()` (whole milliseconds) and measures the duration precisely, so a call that
 * ends and a reward emitted right after it can look out of order. The span processor re-times spans that used the
 * default start onto this clock (see `LightningSpanProcessor`), and emitters pass it as an explicit time.
 */
export function preciseNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** HrTime `[seconds, nanoseconds]` to float seconds; `null` for a zero time. */
export function hrTimeToSeconds(time: HrTime | undefined): number | null {
  if (!time) return null;
  const seconds = time[0] + time[1] / 1e9;
  return seconds === 0 ? null : seconds;
}

function toSpanContext(ctx: OtelSpanContext): SpanContext {
  const traceState: Record<string, string> = {};
  const serialized = ctx.traceState?.serialize();
  if (serialized) {
    for (const pair of serialized.split(',')) {
      const eq = pair.indexOf('=');
      if (eq > 0) traceState[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
    }
  }
  return {
    traceId: ctx.traceId.toLowerCase().padStart(32, '0'),
    spanId: ctx.spanId.toLowerCase().padStart(16, '0'),
    isRemote: ctx.isRemote ?? false,
    traceState,
  };
}

const STATUS_CODES = {
  [SpanStatusCode.UNSET]: 'UNSET',
  [SpanStatusCode.OK]: 'OK',
  [SpanStatusCode.ERROR]: 'ERROR',
} as const;

/**
 * Converts a finished OpenTelemetry span into a store span (AGL 0.3 `Span.from_opentelemetry`, reference §1.7): ids as
 * lowercase hex, times in seconds, status, attributes, events, links, context, parent and resource copied.
 */
export function spanFromOpenTelemetry(
  span: ReadableSpan,
  owner: { rolloutId: string; attemptId: string; sequenceId: number },
  times?: { startTime: number | null; endTime: number | null },
): SpanInput {
  const context = toSpanContext(span.spanContext());
  const parent = span.parentSpanContext ? toSpanContext(span.parentSpanContext) : null;
  return {
    rolloutId: owner.rolloutId,
    attemptId: owner.attemptId,
    sequenceId: owner.sequenceId,
    traceId: context.traceId,
    spanId: context.spanId,
    parentId: parent ? parent.spanId : null,
    name: span.name,
    status: { statusCode: STATUS_CODES[span.status.code] ?? 'UNSET', description: span.status.message ?? null },
    attributes: cleanAttributes(span.attributes),
    events: span.events.map((event) => ({
      name: event.name,
      attributes: cleanAttributes(event.attributes ?? {}),
      timestamp: hrTimeToSeconds(event.time),
    })),
    links: span.links.map((link) => ({
      context: toSpanContext(link.context),
      attributes: link.attributes ? cleanAttributes(link.attributes) : null,
    })),
    startTime: times ? times.startTime : hrTimeToSeconds(span.startTime),
    endTime: times ? times.endTime : hrTimeToSeconds(span.endTime),
    context,
    parent,
    resource: {
      attributes: cleanAttributes(span.resource.attributes),
      schemaUrl: span.resource.schemaUrl ?? '',
    },
  };
}

/**
 * A span in wire form (snake_case, what `toWire('span', span)` gives and `POST /v1/agl/records` takes), with the fields
 * a production recorder reads typed.
 */
export interface WireSpan {
  rollout_id: string;
  attempt_id: string;
  sequence_id: number;
  span_id: string;
  name: string;
  status: { status_code: string; description: string | null };
  attributes: Record<string, unknown>;
  end_time: number | null;
  [key: string]: unknown;
}

interface WireSpanContext {
  trace_id: string;
  span_id: string;
  is_remote: boolean;
  trace_state: Record<string, string>;
}

function toWireSpanContext(ctx: OtelSpanContext): WireSpanContext {
  const c = toSpanContext(ctx);
  return { trace_id: c.traceId, span_id: c.spanId, is_remote: c.isRemote, trace_state: c.traceState };
}

/** The wire form of each resource, built once (every span of a provider shares its resource). */
const wireResources = new WeakMap<Resource, { attributes: Record<string, unknown>; schema_url: string }>();

function wireResource(resource: Resource): { attributes: Record<string, unknown>; schema_url: string } {
  let wire = wireResources.get(resource);
  if (!wire) {
    wire = { attributes: cleanAttributes(resource.attributes), schema_url: resource.schemaUrl ?? '' };
    wireResources.set(resource, wire);
  }
  return wire;
}

/**
 * {@link spanFromOpenTelemetry} straight to the wire form: equal to `toWire('span', spanFromOpenTelemetry(...))`,
 * without building the camelCase span in between. The attribute map is the finished span's own (the SDK ignores
 * writes to an ended span, and its values are never `undefined`), and the resource's wire form is shared by the spans
 * of one provider: readers must not change them in place (the redactor copies what it masks).
 */
export function wireSpanFromOpenTelemetry(
  span: ReadableSpan,
  owner: { rolloutId: string; attemptId: string; sequenceId: number },
  times?: { startTime: number | null; endTime: number | null },
): WireSpan {
  const context = toWireSpanContext(span.spanContext());
  return {
    rollout_id: owner.rolloutId,
    attempt_id: owner.attemptId,
    sequence_id: owner.sequenceId,
    trace_id: context.trace_id,
    span_id: context.span_id,
    parent_id: span.parentSpanContext ? span.parentSpanContext.spanId.toLowerCase().padStart(16, '0') : null,
    name: span.name,
    status: { status_code: STATUS_CODES[span.status.code] ?? 'UNSET', description: span.status.message ?? null },
    attributes: span.attributes,
    events:
      span.events.length === 0
        ? []
        : span.events.map((event) => ({
            name: event.name,
            attributes: cleanAttributes(event.attributes ?? {}),
            timestamp: hrTimeToSeconds(event.time),
          })),
    links:
      span.links.length === 0
        ? []
        : span.links.map((link) => ({
            context: toWireSpanContext(link.context),
            attributes: link.attributes ? cleanAttributes(link.attributes) : null,
          })),
    start_time: times ? times.startTime : hrTimeToSeconds(span.startTime),
    end_time: times ? times.endTime : hrTimeToSeconds(span.endTime),
    context,
    parent: span.parentSpanContext ? toWireSpanContext(span.parentSpanContext) : null,
    resource: wireResource(span.resource),
  };
}
