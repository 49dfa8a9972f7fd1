import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type LlmResponse, llmRequestAttributes, llmResponseAttributes } from '@agl/core/llm-span';
import type { Attributes, SpanInput } from '@agl/core/schema';
import { ATTR_AGL_GATEWAY } from '@agl/core/semconv';
import type { Clock } from '@agl/core/store';
import type { CallPlan } from '../upstream/call-plan';
import { callRequestOf, spanNameOf } from './call-records';
import type { StoreBatcher } from './store-batcher';

/**
 * Where a call's span is built and stored. Its attributes come in two halves, both written by core's Contract 2
 * writer (`@agl/core/llm-span`) from the call's records (`./call-records`): the request half
 * ({@link callRequestAttributes}) is known before the backend answers, so {@link SpanPrep} builds it meanwhile,
 * together with the span's sequence id; the response half is added once the answer is read, and {@link callSpan} makes
 * the store span. {@link recordBeforeAnswer} and {@link answerThenRecord} store it before or right after the answer
 * goes out (`GatewayOptions.spanWrite`).
 */

/** Milliseconds a call's span bookkeeping waits after its request went to the backend (see {@link SpanPrep}). */
export const SPAN_PREP_DELAY_MS = 1;

/** What {@link SpanPrep} prepares. */
export interface PreparedSpan {
  /** The span's sequence id, taken from the store (rejections are handled where it is awaited). */
  sequenceId: Promise<number>;
  /** The request half of the span's attributes; null if building it failed (the span's writer then reports it). */
  requestAttributes: Attributes | null;
}

const ignore = (): undefined => undefined;

/**
 * The part of a rollout call's span that does not depend on the answer: its sequence id (from the store, so it is
 * known before the answer goes out) and the request half of its attributes. It is done while the backend works, but
 * not at once: the write that hands the request over wakes the backend, and on a loopback connection the kernel tends
 * to run the woken process on the writer's core, where it waits for whatever the writer does next. Done right after
 * the write, this bookkeeping delayed the backend's answer (about 0.2 ms per call, one call at a time, on 2 cores), so
 * it runs {@link SPAN_PREP_DELAY_MS} later, or as soon as the answer needs it if that comes first.
 */
export class SpanPrep {
  readonly #batcher: StoreBatcher;
  readonly #plan: CallPlan;
  readonly #scope: NonNullable<CallPlan['scope']>;
  #timer: ReturnType<typeof setTimeout> | null;
  #prepared: PreparedSpan | null = null;

  private constructor(batcher: StoreBatcher, plan: CallPlan, scope: NonNullable<CallPlan['scope']>) {
    this.#batcher = batcher;
    this.#plan = plan;
    this.#scope = scope;
    this.#timer = setTimeout(() => this.get(), SPAN_PREP_DELAY_MS);
  }

  /** Starts the bookkeeping of a call whose request was just sent; null for calls outside a rollout (no span). */
  static start(batcher: StoreBatcher, plan: CallPlan): SpanPrep | null {
    return plan.scope === null ? null : new SpanPrep(batcher, plan, plan.scope);
  }

  /** The prepared parts, done now if the delay has not passed yet. */
  get(): PreparedSpan {
    if (this.#prepared === null) {
      this.cancel();
      const { rolloutId, attemptId } = this.#scope;
      const sequenceId = this.#batcher.nextSequenceId(rolloutId, attemptId);
      sequenceId.catch(ignore);
      this.#prepared = { sequenceId, requestAttributes: attributesOf(this.#plan) };
    }
    return this.#prepared;
  }

  /** Drops the bookkeeping if it has not run yet (the call ended without a span). */
  cancel(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/** The request half of a call's span attributes, marked as the gateway's (throws what building it throws). */
export function callRequestAttributes(plan: CallPlan): Attributes {
  return llmRequestAttributes<Attributes>(callRequestOf(plan), { [ATTR_AGL_GATEWAY]: true });
}

function attributesOf(plan: CallPlan): Attributes | null {
  try {
    return callRequestAttributes(plan);
  } catch {
    return null;
  }
}

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

/** What storing a call's span needs from the gateway (a part of the LLM route's context). */
export interface SpanStorage {
  /** Sequence ids and spans go to the store through this (batched per event-loop turn). */
  batcher: StoreBatcher;
  clock: Clock;
  /** Store the span before the answer goes out, or right after it in the same event-loop turn (`GatewayOptions.spanWrite`). */
  spanWrite: 'before-response' | 'after-response';
  log: (line: string) => void;
}

/** One call being recorded. */
export interface Recording {
  plan: CallPlan;
  /** The span's sequence id and request attributes, prepared while the backend works; null outside a rollout. */
  prep: SpanPrep | null;
  spanId: string;
  startTime: number;
  req: IncomingMessage;
}

/** The span of a finished call. */
function spanOf(
  ctx: SpanStorage,
  rec: Recording,
  scope: NonNullable<CallPlan['scope']>,
  prep: SpanPrep,
  response: LlmResponse,
  sequenceId: number,
): SpanInput {
  return callSpan({
    rolloutId: scope.rolloutId,
    attemptId: scope.attemptId,
    sequenceId,
    spanId: rec.spanId,
    name: spanNameOf(rec.plan.kind),
    attributes: llmResponseAttributes(response, prep.get().requestAttributes ?? callRequestAttributes(rec.plan)),
    startTime: rec.startTime,
    endTime: ctx.clock.now(),
    parent: parseTraceparent(rec.req.headers.traceparent),
  });
}

/**
 * The span's sequence id (null outside a rollout); with `spanWrite: 'before-response'` the span is also stored now,
 * before the answer goes out. Store errors reach the caller.
 */
export async function recordBeforeAnswer(
  ctx: SpanStorage,
  rec: Recording,
  response: LlmResponse,
): Promise<number | null> {
  const scope = rec.plan.scope;
  if (!scope || !rec.prep) return null;
  const sequenceId = await rec.prep.get().sequenceId;
  if (ctx.spanWrite === 'before-response')
    await ctx.batcher.addSpan(spanOf(ctx, rec, scope, rec.prep, response, sequenceId));
  return sequenceId;
}

/**
 * `spanWrite: 'after-response'`: writes the answer (`answer`), then stores the span (`StoreBatcher.answerThenStore`),
 * so the store has it before anything the client does with the answer. Failures can only be logged.
 */
export async function answerThenRecord(
  ctx: SpanStorage,
  rec: Recording,
  answer: () => void,
  response: () => LlmResponse,
  sequenceId: number | null,
): Promise<void> {
  const scope = rec.plan.scope;
  const prep = rec.prep;
  if (!scope || !prep || sequenceId === null) return answer();
  try {
    await ctx.batcher.answerThenStore(answer, () => spanOf(ctx, rec, scope, prep, response(), sequenceId));
  } catch (err) {
    ctx.log(`span not stored after the answer was sent: ${err instanceof Error ? err.message : String(err)}`);
  }
}
