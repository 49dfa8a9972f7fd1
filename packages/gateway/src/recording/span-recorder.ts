import { randomFillSync } from 'node:crypto';
import type { Attributes, SpanInput } from '@agl/core/schema';

/** A W3C trace context taken from the client's `traceparent` header. */
export interface TraceParent {
  traceId: string;
  spanId: string;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** Parses a `traceparent` header (`00-<trace>-<span>-<flags>`); `null` when absent or malformed. */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return { traceId: match[1]!, spanId: match[2]! };
}

/** One finished LLM call to store. */
export interface RecordedCall {
  rolloutId: string;
  attemptId: string;
  sequenceId: number;
  spanId: string;
  name: string;
  attributes: Attributes;
  startTime: number;
  endTime: number;
  parent: TraceParent | null;
}

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** `bytes` random bytes as hex, never all zeros (W3C invalid); drawn from a pool refilled 4 KiB at a time. */
function randomHex(bytes: number): string {
  for (;;) {
    if (poolOffset + bytes > POOL_BYTES) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const start = poolOffset;
    poolOffset += bytes;
    for (let i = start; i < poolOffset; i += 1) if (pool[i] !== 0) return pool.toString('hex', start, poolOffset);
  }
}

/** A new random 16-hex span id. */
export function newSpanId(): string {
  return randomHex(8);
}

/** A new random 32-hex trace id. */
export function newTraceId(): string {
  return randomHex(16);
}

/** The store span of a call: a child of the client's trace when it sent `traceparent`, else a new trace root. */
export function callSpan(call: RecordedCall): SpanInput {
  const traceId = call.parent?.traceId ?? newTraceId();
  return {
    rolloutId: call.rolloutId,
    attemptId: call.attemptId,
    sequenceId: call.sequenceId,
    traceId,
    spanId: call.spanId,
    parentId: call.parent?.spanId ?? null,
    name: call.name,
    status: { statusCode: 'OK', description: null },
    attributes: call.attributes,
    events: [],
    links: [],
    startTime: call.startTime,
    endTime: call.endTime,
    context: { traceId, spanId: call.spanId, isRemote: false, traceState: {} },
    parent: call.parent
      ? { traceId: call.parent.traceId, spanId: call.parent.spanId, isRemote: true, traceState: {} }
      : null,
    resource: { attributes: { 'service.name': 'agl-gateway' }, schemaUrl: '' },
  };
}
