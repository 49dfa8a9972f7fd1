import type { LightningStore, Span } from '@agl/core';
import { getRewardValue } from '@agl/core/transitions';
import { emitException, emitReward, getAglTracer, withRolloutContext, type RolloutContext } from '@agl/core/tracer';

/**
 * The runner's only touch points with the tracer: writing reward/exception spans inside a rollout context, flushing,
 * and reading an attempt's spans back.
 */

/** Flush the tracer of a rollout context (or the process-wide one) so every span of the attempt is in the store. */
export async function flushSpans(ctx: RolloutContext): Promise<void> {
  await (ctx.tracer ?? getAglTracer()).forceFlush();
}

/** Emit a final reward span for the attempt of `ctx` (exported with the next flush). */
export function emitFinalReward(ctx: RolloutContext, value: number): void {
  withRolloutContext(ctx, () => {
    emitReward(value);
  });
}

/** Write a final reward span for the attempt of `ctx`, then flush. */
export async function writeRewardSpan(ctx: RolloutContext, value: number): Promise<void> {
  emitFinalReward(ctx, value);
  await flushSpans(ctx);
}

/** The reward a `rollout()` return value stands for: numbers (finite) and booleans; null for anything else. */
export function rewardOfResult(result: unknown): number | null {
  const numeric = typeof result === 'boolean' ? Number(result) : result;
  if (typeof numeric !== 'number') return null;
  if (!Number.isFinite(numeric))
    throw new TypeError(`rollout() returned ${numeric}; return a finite number (the final reward) or nothing.`);
  return numeric;
}

/**
 * Close the attempt's spans the failure left open (its agent span, a call cut off) with an error, write an exception
 * span, then flush: a failed rollout keeps every span it made.
 */
export async function writeExceptionSpan(ctx: RolloutContext, error: unknown): Promise<void> {
  const err = error instanceof Error ? error : new Error(String(error));
  (ctx.tracer ?? getAglTracer()).closeOpenSpans?.(`the rollout failed: ${err.message}`, ctx);
  await withRolloutContext(ctx, async () => {
    emitException(err);
  });
  await flushSpans(ctx);
}

/** Every span of one attempt, in sequence order. */
export async function attemptSpans(store: LightningStore, rolloutId: string, attemptId: string): Promise<Span[]> {
  const page = await store.querySpans({ rolloutId, attemptId, sortBy: 'sequenceId', sortOrder: 'asc' });
  return page.items;
}

/** True when any span carries a reward (emitted reward span or a reward event). */
export function hasReward(spans: readonly Span[]): boolean {
  return spans.some((s) => getRewardValue(s) !== null);
}
