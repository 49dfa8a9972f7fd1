import type { Attributes } from '@agl/core/schema';
import type { CallPlan } from '../upstream/call-plan';
import { canonicalRequestOf, systemOf } from './call-shapes';
import { requestAttributes } from './canonical-call';
import type { StoreBatcher } from './store-batcher';

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

/** The request half of a call's span attributes (throws what building it throws). */
export function callRequestAttributes(plan: CallPlan): Attributes {
  return requestAttributes(canonicalRequestOf(plan), systemOf(plan.kind));
}

function attributesOf(plan: CallPlan): Attributes | null {
  try {
    return callRequestAttributes(plan);
  } catch {
    return null;
  }
}
