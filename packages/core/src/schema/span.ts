import { z } from 'zod';
import { StatusCode } from './enums';

const Primitive = z.union([z.string(), z.number(), z.boolean()]);

/** An attribute value: a primitive or a homogeneous array of primitives (OpenTelemetry rules). */
export const AttributeValue = z.union([Primitive, z.array(Primitive), z.null()]);
/** @see {@link AttributeValue} */
export type AttributeValue = z.infer<typeof AttributeValue>;

/** Flat attributes; dots in keys encode nesting (`gen_ai.prompt.0.role`). */
export const Attributes = z.record(z.string(), AttributeValue);
/** @see {@link Attributes} */
export type Attributes = z.infer<typeof Attributes>;

/** Span status. Unknown keys are kept. */
export const TraceStatus = z.looseObject({
  /** UNSET, OK or ERROR. */
  statusCode: StatusCode.default('UNSET'),
  /** Error description, if any. */
  description: z.string().nullable().default(null),
});
/** @see {@link TraceStatus} */
export type TraceStatus = z.infer<typeof TraceStatus>;

/** OpenTelemetry span context. Unknown keys are kept. */
export const SpanContext = z.looseObject({
  /** 32 hex digits (free-form strings are accepted). */
  traceId: z.string(),
  /** 16 hex digits (free-form strings are accepted). */
  spanId: z.string(),
  /** True when propagated from another process. */
  isRemote: z.boolean().default(false),
  /** W3C trace state entries. */
  traceState: z.record(z.string(), z.string()).default({}),
});
/** @see {@link SpanContext} */
export type SpanContext = z.infer<typeof SpanContext>;

/** A timestamped span event. Unknown keys are kept. */
export const SpanEvent = z.looseObject({
  /** Event name, e.g. `exception`. */
  name: z.string(),
  /** Event attributes. */
  attributes: Attributes.default({}),
  /** Seconds since the epoch, or `null`. */
  timestamp: z.number().nullable().default(null),
});
/** @see {@link SpanEvent} */
export type SpanEvent = z.infer<typeof SpanEvent>;

/** A link to another span. Unknown keys are kept. */
export const SpanLink = z.looseObject({
  /** The linked span. */
  context: SpanContext,
  /** Link attributes. */
  attributes: Attributes.nullable().default(null),
});
/** @see {@link SpanLink} */
export type SpanLink = z.infer<typeof SpanLink>;

/** The OpenTelemetry resource that produced the span. */
export const OtelResource = z.looseObject({
  /** Resource attributes (service.name, ...). */
  attributes: Attributes.default({}),
  /** Schema URL; `""` when none. */
  schemaUrl: z.string().default(''),
});
/** @see {@link OtelResource} */
export type OtelResource = z.infer<typeof OtelResource>;

/**
 * One OpenTelemetry-shaped span owned by a rollout attempt (AGL 0.3 §1.7). Unknown keys are kept and echoed back, so
 * spans written by newer or other producers survive a round trip.
 */
export const Span = z.looseObject({
  /** Owning rollout. */
  rolloutId: z.string().min(1),
  /** Owning attempt. */
  attemptId: z.string().min(1),
  /** Ordering key within the rollout (shared by its attempts); ties broken by time. */
  sequenceId: z.number().int().min(0),
  /** OpenTelemetry trace id. */
  traceId: z.string(),
  /** OpenTelemetry span id; unique per (rolloutId, attemptId). */
  spanId: z.string().min(1),
  /** Parent span id, or `null` for a root. */
  parentId: z.string().nullable(),
  /** Span name (see semconv). */
  name: z.string(),
  /** Span status. */
  status: TraceStatus.default({ statusCode: 'UNSET', description: null }),
  /** Flat attributes. */
  attributes: Attributes.default({}),
  /** Events. */
  events: z.array(SpanEvent).default([]),
  /** Links. */
  links: z.array(SpanLink).default([]),
  /** Start, seconds since the epoch, or `null`. */
  startTime: z.number().nullable(),
  /** End, seconds since the epoch, or `null`. */
  endTime: z.number().nullable(),
  /** Own context. */
  context: SpanContext.nullable().default(null),
  /** Parent context. */
  parent: SpanContext.nullable().default(null),
  /** Producing resource. */
  resource: OtelResource.default({ attributes: {}, schemaUrl: '' }),
});
/** @see {@link Span} */
export type Span = z.infer<typeof Span>;
/** What callers may pass to `addSpan`. */
export type SpanInput = z.input<typeof Span>;

/**
 * Timestamp normalisation of AGL 0.3: a falsy value becomes `null`; a value above 1e12 is nanoseconds; anything else is
 * already seconds.
 */
export function normalizeTimestamp(value: number | null | undefined): number | null {
  if (!value) return null;
  return value > 1e12 ? value / 1e9 : value;
}
