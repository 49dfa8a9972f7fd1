import { StatusCode } from './enums';
import { emptyRecord } from './empty-record';
import type { Span } from './span';

/**
 * A hand-written fast path for validating spans, equivalent to parsing with the `Span` zod schema for every input it
 * accepts (same defaults, unknown keys kept). It returns `null` whenever it is unsure, and the caller then parses with
 * zod, which also produces the error message. `fast-span.test.ts` checks the equivalence. It exists because span
 * ingestion is the store's hottest path and zod costs more than the SQLite insert itself. The result shares no
 * object with the input, unless `shareAttributes` is set: then the (checked) attribute map is the input's own, for
 * callers that only serialise it (copying a large map costs about a tenth of an SQLite span insert).
 */
export function fastParseSpan(value: unknown, options: { shareAttributes?: boolean } = {}): Span | null {
  if (!isPlainObject(value)) return null;
  const v = value;
  if (!isNonEmptyString(v.rolloutId) || !isNonEmptyString(v.attemptId) || !isNonEmptyString(v.spanId)) return null;
  if (typeof v.traceId !== 'string' || typeof v.name !== 'string') return null;
  if (typeof v.sequenceId !== 'number' || !Number.isInteger(v.sequenceId) || v.sequenceId < 0) return null;
  if (v.parentId !== null && typeof v.parentId !== 'string') return null;
  if (!isNullableNumber(v.startTime) || !isNullableNumber(v.endTime)) return null;

  const status = v.status === undefined ? { statusCode: 'UNSET', description: null } : traceStatus(v.status);
  const attributes = v.attributes === undefined ? {} : attributesOf(v.attributes, options.shareAttributes === true);
  const events = v.events === undefined ? [] : listOf(v.events, event);
  const links = v.links === undefined ? [] : listOf(v.links, link);
  const context = v.context === undefined || v.context === null ? null : spanContext(v.context);
  const parent = v.parent === undefined || v.parent === null ? null : spanContext(v.parent);
  const resource = v.resource === undefined ? { attributes: {}, schemaUrl: '' } : otelResource(v.resource);
  if (!status || !attributes || !events || !links || context === undefined || parent === undefined || !resource)
    return null;
  const out: Record<string, unknown> = { ...v, status, attributes, events, links, context, parent, resource };
  return out as Span;
}

type Obj = Record<string, unknown>;

function isPlainObject(value: unknown): value is Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isNullableNumber = (v: unknown): boolean => v === null || isFiniteNumber(v);
const isPrimitive = (v: unknown): boolean => typeof v === 'string' || typeof v === 'boolean' || isFiniteNumber(v);

function attributesOf(value: unknown, share = false): Obj | null {
  if (!isPlainObject(value) || Object.hasOwn(value, '__proto__')) return null;
  for (const key in value) {
    const item = value[key];
    if (item === null || isPrimitive(item)) continue;
    if (!Array.isArray(item)) return null;
    for (const element of item) if (!isPrimitive(element)) return null;
  }
  return share ? value : copyRecord(value);
}

/** A shallow copy of a record (own enumerable string keys, same order; callers leave `__proto__` to zod). */
function copyRecord(value: Obj): Obj {
  const out = emptyRecord();
  for (const key of Object.keys(value)) out[key] = value[key];
  return out;
}

function listOf(value: unknown, parse: (item: unknown) => Obj | null): Obj[] | null {
  if (!Array.isArray(value)) return null;
  const out: Obj[] = [];
  for (const item of value) {
    const parsed = parse(item);
    if (!parsed) return null;
    out.push(parsed);
  }
  return out;
}

function traceStatus(value: unknown): Obj | null {
  if (!isPlainObject(value)) return null;
  const code = value.statusCode === undefined ? 'UNSET' : value.statusCode;
  if (!StatusCode.options.includes(code as StatusCode)) return null;
  const description = value.description === undefined ? null : value.description;
  if (description !== null && typeof description !== 'string') return null;
  return { ...value, statusCode: code, description };
}

function event(value: unknown): Obj | null {
  if (!isPlainObject(value) || typeof value.name !== 'string') return null;
  const attributes = value.attributes === undefined ? {} : attributesOf(value.attributes);
  const timestamp = value.timestamp === undefined ? null : value.timestamp;
  if (!attributes || !isNullableNumber(timestamp)) return null;
  return { ...value, attributes, timestamp };
}

function link(value: unknown): Obj | null {
  if (!isPlainObject(value)) return null;
  const context = spanContext(value.context);
  const attributes =
    value.attributes === undefined || value.attributes === null ? null : attributesOf(value.attributes);
  if (!context || (value.attributes != null && !attributes)) return null;
  return { ...value, context, attributes };
}

/** A span context, or `undefined` when invalid (null is a valid "no context" for the callers that allow it). */
function spanContext(value: unknown): Obj | undefined {
  if (!isPlainObject(value) || typeof value.traceId !== 'string' || typeof value.spanId !== 'string') return undefined;
  const isRemote = value.isRemote === undefined ? false : value.isRemote;
  if (typeof isRemote !== 'boolean') return undefined;
  const traceState = value.traceState === undefined ? {} : value.traceState;
  if (!isPlainObject(traceState)) return undefined;
  for (const key in traceState) if (typeof traceState[key] !== 'string') return undefined;
  return { ...value, isRemote, traceState: { ...traceState } };
}

function otelResource(value: unknown): Obj | null {
  if (!isPlainObject(value)) return null;
  const attributes = value.attributes === undefined ? {} : attributesOf(value.attributes);
  const schemaUrl = value.schemaUrl === undefined ? '' : value.schemaUrl;
  if (!attributes || typeof schemaUrl !== 'string') return null;
  return { ...value, attributes, schemaUrl };
}
