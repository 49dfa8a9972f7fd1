import type { AttemptedRollout, Span } from '@agl/core';
import type { RolloutContext } from '@agl/core/tracer';
import type { LitAgent } from '../agent/lit-agent';
import type { ProcessAgent } from '../agent/process-agent';
import { callHook, type RewardHook, type RunnerHooks, type RunnerLogger } from './hooks';
import { attemptSpans, hasReward, writeRewardSpan } from './span-io';

/** Inputs of {@link finishAttempt}. */
export interface FinishAttemptOptions {
  ctx: RolloutContext;
  rollout: AttemptedRollout;
  agent: LitAgent | ProcessAgent;
  workerId: string;
  hooks: RunnerHooks;
  logger: RunnerLogger;
  reward?: RewardHook;
  /** What the agent returned (given to the reward hook). */
  result: unknown;
  failed: boolean;
  error?: unknown;
  /** True when the caller already wrote the final reward from the result (skips the reward hook). */
  rewardWritten?: boolean;
}

/**
 * The common tail of every attempt: the runner-side `reward` hook when no reward was written or emitted,
 * `onRolloutEnd`, then the attempt status. Status races with the watchdog are reported, not thrown.
 */
export async function finishAttempt(options: FinishAttemptOptions): Promise<'succeeded' | 'failed'> {
  const { ctx, rollout, logger, hooks } = options;
  let failed = options.failed;
  let error = options.error;
  let spans: Span[] = [];
  try {
    if (!failed && !options.rewardWritten) {
      if (options.reward) {
        spans = await attemptSpans(ctx.store, ctx.rolloutId, ctx.attemptId);
        if (!hasReward(spans)) {
          const value = await options.reward(rollout.input, options.result, spans);
          if (typeof value === 'number') {
            await writeRewardSpan(ctx, value);
          }
        }
      }
    }
  } catch (err) {
    failed = true;
    error = err;
    logger.warn(
      `final reward of ${ctx.rolloutId}/${ctx.attemptId} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  try {
    if (hooks.onRolloutEnd) spans = await attemptSpans(ctx.store, ctx.rolloutId, ctx.attemptId);
  } catch (err) {
    logger.warn(
      `reading spans of ${ctx.rolloutId}/${ctx.attemptId} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const status = failed ? 'failed' : 'succeeded';
  await callHook(logger, 'onRolloutEnd', hooks.onRolloutEnd, {
    agent: options.agent,
    rollout,
    workerId: options.workerId,
    spans,
    status,
    error,
  });
  try {
    await ctx.store.updateAttempt(ctx.rolloutId, ctx.attemptId, { status });
  } catch (err) {
    logger.warn(
      `could not mark ${ctx.rolloutId}/${ctx.attemptId} ${status} (the watchdog may have closed it): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return status;
}
