import { getRewardSource, getRewardValue, listFeedback } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import type { Span } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { ATTR_JUDGE_MODEL, ATTR_JUDGE_RUBRIC_HASH } from '@agl/core/semconv';
import { latestSpans, recordedRollouts } from '@agl/trainer';
import { spearmanRho } from './spearman';

/** Options of {@link judgeAgreement}. */
export interface JudgeAgreementOptions {
  /** A score counts as positive at or above this (default 0.5), for the judge and the user alike. */
  threshold?: number;
  /** Only judge scores of this model. */
  model?: string;
  /** Only judge scores of this rubric (`agl.judge.rubric_hash`). */
  rubricHash?: string;
  /** Rollouts started at or after / before (epoch seconds). */
  since?: number;
  until?: number;
}

/** How well judge scores agree with user feedback on the rollouts that have both. */
export interface JudgeAgreementReport {
  /** Rollouts with both a judge score and feedback. */
  pairs: number;
  /** Spearman's rank correlation between the judge's and the users' rewards; null with < 2 pairs or no spread. */
  rho: number | null;
  /** Share of pairs on the same side of the threshold; null without pairs. */
  accuracy: number | null;
  threshold: number;
  /** The pairs, oldest rollout first. */
  items: { rolloutId: string; judge: number; feedback: number }[];
}

/**
 * Compares the judge with the users (`agl judge --agreement`): for every rollout with both, the latest judge score
 * (optionally of one model / rubric) against the latest feedback reward, as Spearman's rho and as accuracy at a
 * threshold.
 */
export async function judgeAgreement(
  store: LightningStore,
  options: JudgeAgreementOptions = {},
): Promise<JudgeAgreementReport> {
  const threshold = options.threshold ?? 0.5;
  if (!Number.isFinite(threshold))
    throw new UserError(`threshold must be a finite number; got ${String(options.threshold)}. Use e.g. 0.5.`);
  const items: JudgeAgreementReport['items'] = [];
  for (const rollout of await recordedRollouts(store, { since: options.since, until: options.until })) {
    const spans = await latestSpans(store, rollout.rolloutId);
    const feedback = listFeedback(spans).at(-1);
    const judged = spans.filter(
      (s: Span) =>
        getRewardSource(s) === 'judge' &&
        (options.model === undefined || s.attributes[ATTR_JUDGE_MODEL] === options.model) &&
        (options.rubricHash === undefined || s.attributes[ATTR_JUDGE_RUBRIC_HASH] === options.rubricHash),
    );
    const judge = judged.length > 0 ? getRewardValue(judged.at(-1) as Span) : null;
    if (feedback && judge !== null) items.push({ rolloutId: rollout.rolloutId, judge, feedback: feedback.reward });
  }
  const agree = items.filter((p) => p.judge >= threshold === p.feedback >= threshold).length;
  return {
    pairs: items.length,
    rho: spearmanRho(
      items.map((p) => p.judge),
      items.map((p) => p.feedback),
    ),
    accuracy: items.length === 0 ? null : agree / items.length,
    threshold,
    items,
  };
}
