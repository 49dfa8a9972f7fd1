// TEMPORARY: the lead's contract A names (CONTRACTS.md), until `main` lands them in @agl/core. Deleted after the merge.
import { getRewardsFromSpan, getRewardValue, type RewardDimension, type SpanLike } from '@agl/core/adapters';

export const ATTR_REWARD_SOURCE = 'agl.reward.source';
export const ATTR_FEEDBACK_COMMENT = 'agl.feedback.comment';

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
