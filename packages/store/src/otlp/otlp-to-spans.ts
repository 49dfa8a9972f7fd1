import { ATTR_ATTEMPT_ID, ATTR_ROLLOUT_ID, ATTR_SPAN_SEQUENCE_ID } from '@agl/core/semconv';
import { emptyRecord, type AttributeValue, type Attributes, type SpanInput, type StatusCode } from '@agl/core/schema';
import type { PlainTraceRequest } from './otlp-proto';
import { NO_INGEST_LIMITS, checkAttributeCount, checkSpanCount, type IngestLimits } from '../ingest-limits';

/** One OTLP span turned into an AGL span; `sequenceId` is `null` when the sender gave none (the store issues one). */
export interface ConvertedSpan {
  /** The span; its `sequenceId` is a placeholder 0 when {@link ConvertedSpan.sequenceId} is `null`. */
  span: SpanInput;
  /** The sender's sequence id, or `null` when it gave none (or an invalid one). */
  sequenceId: number | null;
}

/** A span that could not be given an owner. */
export interface UnownedSpan {
  name: string;
  spanId: string;
  reason: string;
}

/** The outcome of converting one request. */
export interface ConversionResult {
  spans: ConvertedSpan[];
  unowned: UnownedSpan[];
}

type Plain = Record<string, unknown>;
type Primitive = string | number | boolean;

const asArray = (value: unknown): Plain[] => (Array.isArray(value) ? (value as Plain[]) : []);

function idHex(value: unknown, width: number): string {
  const hex = typeof value === 'string' && value !== '' ? Buffer.from(value, 'base64').toString('hex') : '';
  return hex.padStart(width, '0');
}

/** Unix nanoseconds (a bigint, or a decimal string as decoded messages give them) → float seconds; 0 or missing → null. */
export function nanosToSeconds(value: unknown): number | null {
  if (value === undefined || value === null || value === '' || value === '0' || value === 0) return null;
  const nanos = typeof value === 'bigint' ? value : BigInt(String(value));
  if (nanos === 0n) return null;
  return Number(nanos / 1000n) / 1e6;
}

/** An int64 as a number when it is a safe integer, else as its decimal string. */
export function int64(value: unknown): number | string {
  const text = String(value);
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** AnyValue → a JS value; kvlists become objects, bytes become hex. */
function anyValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Plain;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return int64(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('bytesValue' in v) return Buffer.from(String(v.bytesValue), 'base64').toString('hex');
  if ('arrayValue' in v) return asArray((v.arrayValue as Plain | undefined)?.values).map(anyValue);
  if ('kvlistValue' in v) {
    return Object.fromEntries(
      asArray((v.kvlistValue as Plain | undefined)?.values).map((kv) => [String(kv.key ?? ''), anyValue(kv.value)]),
    );
  }
  return null;
}

function isHomogeneousPrimitiveArray(items: unknown[]): items is Primitive[] {
  if (items.length === 0) return true;
  const kind = typeof items[0];
  return (kind === 'string' || kind === 'number' || kind === 'boolean') && items.every((item) => typeof item === kind);
}

/**
 * Writes one attribute into the flat AGL attribute map: primitives and homogeneous primitive arrays stay as they are;
 * kvlists are flattened into dotted keys (`key.sub`); anything else becomes a JSON string.
 */
export function putAttribute(out: Attributes, key: string, value: unknown): void {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out[key] = value as AttributeValue;
  } else if (Array.isArray(value)) {
    out[key] = isHomogeneousPrimitiveArray(value) ? value : JSON.stringify(value);
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Plain);
    if (entries.length === 0) out[key] = JSON.stringify(value);
    for (const [sub, nested] of entries) putAttribute(out, `${key}.${sub}`, nested);
  }
}

function attributes(list: unknown): Attributes {
  const out = emptyRecord<AttributeValue>();
  // An empty key is left out of the decoded object (proto3 default): it is "", not "undefined".
  for (const kv of asArray(list)) putAttribute(out, String(kv.key ?? ''), anyValue(kv.value));
  return out;
}

const STATUS_CODES: Record<number, StatusCode> = { 0: 'UNSET', 1: 'OK', 2: 'ERROR' };

function sequenceOf(value: AttributeValue | undefined): number | null {
  if (value === undefined || value === null) return null;
  const text = String(value).trim();
  if (!/^-?\d+$/.test(text)) return null;
  const n = Number(text);
  return n < 0 ? null : n;
}

/** One OTLP span with its ids in hex and its attribute maps built: what either decoder hands to {@link collectSpan}. */
export interface DecodedOtlpSpan {
  traceId: string;
  spanId: string;
  parentId: string | null;
  name: string;
  statusCode: number;
  statusMessage: string;
  attributes: Attributes;
  events: Array<{ name: string; attributes: Attributes; timestamp: number | null }>;
  links: Array<{ traceId: string; spanId: string; attributes: Attributes }>;
  startTime: number | null;
  endTime: number | null;
}

/**
 * Adds one decoded span to `result` (a 413 `HttpError` past `limits`), owned by the `agentlightning.rollout_id` / `attempt_id` / `span_sequence_id`
 * attributes of the span or its resource (the span wins), or to `unowned` when it has none.
 */
export function collectSpan(
  result: ConversionResult,
  raw: DecodedOtlpSpan,
  resourceAttributes: Attributes,
  schemaUrl: string,
  limits: IngestLimits,
): void {
  checkSpanCount(result.spans.length + result.unowned.length + 1, limits);
  checkAttributeCount(Object.keys(raw.attributes).length, `span "${raw.name}"`, limits);
  const pick = (key: string): AttributeValue | undefined => raw.attributes[key] ?? resourceAttributes[key];
  const rolloutId = pick(ATTR_ROLLOUT_ID);
  const attemptId = pick(ATTR_ATTEMPT_ID);
  const { traceId, spanId, name } = raw;
  if (
    rolloutId === undefined ||
    rolloutId === null ||
    rolloutId === '' ||
    attemptId === undefined ||
    attemptId === null ||
    attemptId === ''
  ) {
    result.unowned.push({
      name,
      spanId,
      reason: `span "${name}" (${spanId}) has no ${ATTR_ROLLOUT_ID}/${ATTR_ATTEMPT_ID} attribute on the span or its resource`,
    });
    return;
  }
  const sequenceId = sequenceOf(pick(ATTR_SPAN_SEQUENCE_ID));
  result.spans.push({
    sequenceId,
    span: {
      rolloutId: String(rolloutId),
      attemptId: String(attemptId),
      sequenceId: sequenceId ?? 0,
      traceId,
      spanId,
      parentId: raw.parentId,
      name,
      status: {
        statusCode: STATUS_CODES[raw.statusCode] ?? 'UNSET',
        description: raw.statusMessage !== '' ? raw.statusMessage : null,
      },
      attributes: raw.attributes,
      events: raw.events,
      links: raw.links.map((link) => ({
        context: { traceId: link.traceId, spanId: link.spanId, isRemote: false, traceState: {} },
        attributes: Object.keys(link.attributes).length === 0 ? null : link.attributes,
      })),
      startTime: raw.startTime,
      endTime: raw.endTime,
      context: { traceId, spanId, isRemote: false, traceState: {} },
      parent: null,
      resource: { attributes: resourceAttributes, schemaUrl },
    },
  });
}

/**
 * Converts a decoded `ExportTraceServiceRequest` (the plain objects of `decodeTraceRequestJson`) to AGL spans
 * (reference v0 §3.4). Protobuf bodies usually take `convertTraceRequestProtobuf`, which reads the bytes directly.
 */
export function convertTraceRequest(
  request: PlainTraceRequest,
  limits: IngestLimits = NO_INGEST_LIMITS,
): ConversionResult {
  const result: ConversionResult = { spans: [], unowned: [] };
  for (const resourceSpans of asArray(request.resourceSpans)) {
    const resource = (resourceSpans.resource ?? {}) as Plain;
    const resourceAttributes = attributes(resource.attributes);
    const schemaUrl = typeof resourceSpans.schemaUrl === 'string' ? resourceSpans.schemaUrl : '';
    for (const scopeSpans of asArray(resourceSpans.scopeSpans)) {
      for (const raw of asArray(scopeSpans.spans)) {
        const status = (raw.status ?? {}) as Plain;
        collectSpan(
          result,
          {
            traceId: idHex(raw.traceId, 32),
            spanId: idHex(raw.spanId, 16),
            parentId:
              typeof raw.parentSpanId === 'string' && raw.parentSpanId !== '' ? idHex(raw.parentSpanId, 16) : null,
            name: typeof raw.name === 'string' ? raw.name : '',
            statusCode: typeof status.code === 'number' ? status.code : 0,
            statusMessage: typeof status.message === 'string' ? status.message : '',
            attributes: attributes(raw.attributes),
            events: asArray(raw.events).map((event) => ({
              name: typeof event.name === 'string' ? event.name : '',
              attributes: attributes(event.attributes),
              timestamp: nanosToSeconds(event.timeUnixNano),
            })),
            links: asArray(raw.links).map((link) => ({
              traceId: idHex(link.traceId, 32),
              spanId: idHex(link.spanId, 16),
              attributes: attributes(link.attributes),
            })),
            startTime: nanosToSeconds(raw.startTimeUnixNano),
            endTime: nanosToSeconds(raw.endTimeUnixNano),
          },
          resourceAttributes,
          schemaUrl,
          limits,
        );
      }
    }
  }
  return result;
}
