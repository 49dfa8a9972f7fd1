// TEMPORARY: the lead's contract A names (CONTRACTS.md), until `main` lands them in @agl/core. Deleted after the merge.
import { getRewardsFromSpan, getRewardValue, type RewardDimension, type SpanLike } from '@agl/core/adapters';
import { NotFoundError } from '@agl/core/errors';
import type { Attributes, Span } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

export const ATTR_REWARD_SOURCE = 'agl.reward.source';
export const ATTR_FEEDBACK_COMMENT = 'agl.feedback.comment';
export const ATTR_JUDGE_MODEL = 'agl.judge.model';
export const ATTR_JUDGE_RUBRIC_HASH = 'agl.judge.rubric_hash';
export const ATTR_JUDGE_RATIONALE = 'agl.judge.rationale';
export const ATTR_JUDGE_MODE = 'agl.judge.mode';

export function getRewardSource(span: SpanLike): 'feedback' | 'judge' | 'agent' {
  const s = span.attributes[ATTR_REWARD_SOURCE];
  return s === 'feedback' || s === 'judge' ? s : 'agent';
}

export function findFinalRewardSpan<T extends SpanLike>(spans: readonly T[]): T | null {
  for (const source of ['feedback', 'agent', 'judge'] as const) {
    for (let i = spans.length - 1; i >= 0; i -= 1) {
      const span = spans[i] as T;
      if (getRewardValue(span) !== null && getRewardSource(span) === source) return span;
    }
  }
  return null;
}

export function findFinalReward(spans: readonly SpanLike[]): number | null {
  const span = findFinalRewardSpan(spans);
  return span ? getRewardValue(span) : null;
}

export function listFeedback(spans: readonly (SpanLike & { spanId: string })[]): {
  reward: number;
  comment?: string;
  dimensions: RewardDimension[];
  sequenceId: number;
  time: number | null;
  spanId: string;
}[] {
  return spans
    .filter((s) => getRewardSource(s) === 'feedback' && getRewardValue(s) !== null)
    .map((s) => {
      const comment = s.attributes[ATTR_FEEDBACK_COMMENT];
      return {
        reward: getRewardValue(s) as number,
        ...(typeof comment === 'string' ? { comment } : {}),
        dimensions: getRewardsFromSpan(s).slice(1),
        sequenceId: s.sequenceId ?? 0,
        time: s.startTime ?? null,
        spanId: s.spanId,
      };
    });
}

export async function recordRewardSpan(
  store: LightningStore,
  rolloutId: string,
  attributes: Attributes,
): Promise<Span> {
  const attempt = await store.getLatestAttempt(rolloutId);
  if (!attempt) throw new NotFoundError('rollout', rolloutId, `Rollout ${rolloutId} has no attempt.`);
  const sequenceId = await store.getNextSpanSequenceId(rolloutId, attempt.attemptId);
  const now = Date.now() / 1000;
  const id = `${Math.random().toString(16).slice(2)}${Math.random().toString(16).slice(2)}`
    .slice(0, 16)
    .padEnd(16, '0');
  const span = await store.addSpan({
    rolloutId,
    attemptId: attempt.attemptId,
    sequenceId,
    traceId: id.padEnd(32, '0'),
    spanId: id,
    parentId: null,
    name: 'agentlightning.annotation',
    attributes,
    startTime: now,
    endTime: now,
  });
  if (!span) throw new Error('duplicate span');
  return span;
}
