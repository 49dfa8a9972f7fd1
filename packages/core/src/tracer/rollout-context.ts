import { context, createContextKey, type Tracer } from '@opentelemetry/api';
import { UserError } from '../errors/index';
import type { Span, SpanInput } from '../schema/index';
import type { LightningStore } from '../store/index';
import { ensureContextManager } from './context-manager';
import type { WireSpan } from './span-conversion';

/**
 * Who owns the spans created inside a rollout (DESIGN.md Contract 1). The runner enters one around each call of the
 * agent's `rollout()`; the tracer and the emitters read it. Concurrent rollouts in one process each have their own.
 */
export interface RolloutContext {
  /** Owning rollout. */
  readonly rolloutId: string;
  /** Owning attempt. */
  readonly attemptId: string;
  /** Where the spans go (embedded store or `StoreClient`). */
  readonly store: LightningStore;
  /**
   * The tracer whose span processor exports this rollout's spans; defaults to the process-wide one
   * (`getAglTracer()`). Typed structurally so this module does not import the OpenTelemetry SDK.
   */
  readonly tracer?: RolloutTracer;
  /** Rollout mode (`train`, `val`, ...), informational. */
  readonly mode?: string | null;
  /** Resources version the rollout runs with, informational. */
  readonly resourcesId?: string | null;
  /** Worker running the rollout, informational. */
  readonly workerId?: string | null;
  /** Called with the spans the store accepted for this rollout, after each export batch. */
  readonly onSpans?: (spans: Span[]) => void;
  /**
   * Takes this context's finished spans itself, in place of the span processor's batched export to `store` (no
   * `getNextSpanSequenceIds` / `addSpans` calls): the production recorder, whose store is its own buffer. It is called
   * on the next turn of the event loop after the spans end (off the request's path), in end order, with `sequenceId`
   * 0 on each: the sink numbers them. `onSpans` is not called. It must not throw (a throw is counted as failed).
   */
  readonly spanSink?: (spans: SpanInput[]) => void;
  /**
   * A {@link spanSink} that takes the spans in wire form (`toWire('span', …)`, built straight from the OpenTelemetry
   * span: no camelCase span in between), `sequence_id` 0 on each. Wins over `spanSink` when both are set. The span's
   * attribute map and its resource are shared with the tracer: the sink must not change them in place.
   */
  readonly wireSpanSink?: (spans: WireSpan[]) => void;
}

/** The part of `AglTracer` the rollout context needs (avoids an import cycle). */
export interface RolloutTracer {
  /** An OpenTelemetry tracer whose spans reach this tracer's span processor. */
  getTracer(name?: string): Tracer;
  /** Exports every queued span. */
  forceFlush(): Promise<void>;
  /** Resolves once the spans queued so far are with their store, on the normal export schedule (no forced export). */
  whenExported?(): Promise<void>;
  /**
   * Calls `callback` once the spans ended so far are with their store or sink: at once (synchronously) when nothing but
   * sink spans was waiting (they are handed over first), else when {@link whenExported} would resolve. Costs no promise
   * in the common case (a production recorder queues each rollout's end after its spans with it).
   */
  afterSpansHanded?(callback: () => void): void;
  /** Ends the spans of `owner` still open with an ERROR status (a failed rollout); returns how many. */
  closeOpenSpans?(message: string, owner?: { rolloutId: string; attemptId: string }): number;
}

/** Marks a scope where nothing is recorded (see {@link withoutRecording}). */
const NOT_RECORDED = Symbol('agl.not-recorded');
/**
 * The rollout context rides OpenTelemetry's context (one value of it), so a request pays for one async context
 * propagation, not two: the context manager that carries the active span carries the rollout too.
 */
const ROLLOUT_CONTEXT_KEY = createContextKey('agl.rollout-context');

/** Runs `fn` with `value` as the rollout context (or the no-recording mark) of OpenTelemetry's active context. */
function runWith<T>(value: RolloutContext | typeof NOT_RECORDED, fn: () => T): T {
  ensureContextManager();
  return context.with(context.active().setValue(ROLLOUT_CONTEXT_KEY, value), fn);
}

function current(): RolloutContext | typeof NOT_RECORDED | undefined {
  return context.active().getValue(ROLLOUT_CONTEXT_KEY) as RolloutContext | typeof NOT_RECORDED | undefined;
}

/**
 * Runs `fn` inside a rollout context: every span started (and every emitter called) within it, including in awaited
 * callbacks and timers, belongs to `ctx.rolloutId` / `ctx.attemptId`.
 */
export function withRolloutContext<T>(ctx: RolloutContext, fn: () => T): T {
  if (!ctx.rolloutId || !ctx.attemptId) {
    throw new UserError(
      `withRolloutContext needs both rolloutId and attemptId (got rolloutId=${JSON.stringify(ctx.rolloutId)}, ` +
        `attemptId=${JSON.stringify(ctx.attemptId)}); pass the ids of the dequeued AttemptedRollout.`,
    );
  }
  return runWith(ctx, fn);
}

let processRolloutContext: RolloutContext | undefined;

/**
 * Sets (or clears, with `undefined`) the rollout context that applies outside any `withRolloutContext`: a process agent
 * started by the runner owns all its spans (the `node --import @agl/<fw>/register` preload sets it from `AGL_ROLLOUT_ID`
 * / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`). An in-process `withRolloutContext` still wins.
 */
export function setProcessRolloutContext(ctx: RolloutContext | undefined): void {
  processRolloutContext = ctx;
}

/**
 * Runs `fn` with recording off, even inside a rollout or a process agent: no span started in it is recorded (nor
 * taken for an unscoped LLM call), the AGL adapters start no span and send no trace headers (the framework runs as
 * without AGL), and emitters and `operation` only run (`propagate: false`). `@agl/client`'s `observe` runs the requests
 * it does not record in it (sampled out, buffer full, no store), so they cost what they cost without AGL, less the
 * async context.
 */
export function withoutRecording<T>(fn: () => T): T {
  return runWith(NOT_RECORDED, fn);
}

/** True inside {@link withoutRecording}. */
export function isRecordingOff(): boolean {
  return current() === NOT_RECORDED;
}

/**
 * The rollout context of the caller (else the process-wide one), or `undefined` outside any rollout and inside
 * {@link withoutRecording}.
 */
export function getRolloutContext(): RolloutContext | undefined {
  const store = current();
  if (store === NOT_RECORDED) return undefined;
  return store ?? processRolloutContext;
}

/** The rollout context of the caller; throws a `UserError` naming `what` outside a rollout. */
export function requireRolloutContext(what: string): RolloutContext {
  const ctx = getRolloutContext();
  if (!ctx) {
    throw new UserError(
      `${what} was called outside a rollout: there is no active rollout context, so the span would have no owner. ` +
        "Call it from inside your agent's rollout() (the runner sets the context), wrap the code in " +
        'withRolloutContext({ rolloutId, attemptId, store }, fn), or pass { propagate: false } to only build the span.',
    );
  }
  return ctx;
}
