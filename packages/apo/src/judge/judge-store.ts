import { findFinalReward, getRewardSource, getRewardValue, taskIdOf } from '@agl/core/transitions';
import { BudgetExceededError } from '@agl/core/errors';
import type { Rollout, RolloutStatus, Span } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import type { ChatUsage } from '../chat-client';
import {
  ATTR_JUDGE_MODE,
  ATTR_JUDGE_MODEL,
  ATTR_JUDGE_RATIONALE,
  ATTR_JUDGE_RUBRIC_HASH,
  ATTR_REWARD_SOURCE,
  REWARD_PRIMARY_NAME,
  REWARD_SOURCES,
  rewardNameKey,
  rewardValueKey,
} from '@agl/core/semconv';
import { recordRewardSpan } from '@agl/core/store';
import { latestSpans, recordedRollouts } from '@agl/trainer';
import { JudgeAnswerError, type JudgeResult, type LlmJudge } from './llm-judge';
import { rolloutTranscript } from './transcript';

/** Options of {@link judgeStore}. */
export interface JudgeStoreOptions {
  /** Only rollouts without a final reward (no feedback, agent reward or judge score of any rubric). */
  onlyUnrewarded?: boolean;
  /** Rollouts started at or after (epoch seconds). */
  since?: number;
  /** Rollouts started before (epoch seconds). */
  until?: number;
  /** `task`: the rollouts of one task (`metadata.task_id`, else the input's hash) are judged together (group mode). */
  groupBy?: 'task' | null;
  /** Judge calls in flight at once (default 4). */
  concurrency?: number;
  /** Rollout statuses to judge (default `succeeded`, `failed`). */
  statuses?: readonly RolloutStatus[];
  /** Called after each judged rollout. */
  onScore?: (event: { rolloutId: string; reward: number; cached: boolean }) => void;
}

/** What {@link judgeStore} did. */
export interface JudgeStoreReport {
  /** Rollouts read (after the time filter). */
  rollouts: number;
  /** Judge reward spans written. */
  judged: number;
  /** Of those, scores taken from the cache (no call). */
  cached: number;
  /** Skipped: already judged by this model and rubric. */
  alreadyJudged: number;
  /** Skipped by `onlyUnrewarded`: they had a reward. */
  rewarded: number;
  /** Answers that never parsed: no reward written. */
  failures: { rolloutIds: string[]; message: string }[];
  /** Rollouts not judged because the budget ran out. */
  notJudged: number;
  /** The budget message when the token or cost budget ran out (the run stopped cleanly), else null. */
  budgetExhausted: string | null;
  usage: ChatUsage;
}

interface Unit {
  rollouts: Rollout[];
  transcripts: string[];
}

/** True when the span is a judge score of this judge's model and rubric. */
function isOwnJudgeSpan(span: Span, judge: LlmJudge): boolean {
  return (
    getRewardSource(span) === 'judge' &&
    getRewardValue(span) !== null &&
    span.attributes[ATTR_JUDGE_MODEL] === judge.model &&
    span.attributes[ATTR_JUDGE_RUBRIC_HASH] === judge.rubricHash
  );
}

/** The reward-span attributes of one judge score (CONTRACTS.md A). */
export function judgeSpanAttributes(
  judge: LlmJudge,
  score: JudgeResult,
  mode: 'rubric' | 'group',
): Record<string, string | number> {
  return {
    [rewardNameKey(0)]: REWARD_PRIMARY_NAME,
    [rewardValueKey(0)]: score.reward,
    [ATTR_REWARD_SOURCE]: REWARD_SOURCES.judge,
    [ATTR_JUDGE_MODEL]: judge.model,
    [ATTR_JUDGE_RUBRIC_HASH]: judge.rubricHash,
    [ATTR_JUDGE_RATIONALE]: score.rationale,
    [ATTR_JUDGE_MODE]: mode,
  };
}

/**
 * Judges a store's rollouts offline (`agl judge`): each rollout's latest attempt becomes a transcript, scored by the
 * rubric judge (or, with `groupBy: 'task'`, the rollouts of one task together by the group judge), and each score is
 * written as a judge reward span on the rollout. A rollout that already has a score of this model and rubric is
 * skipped, so a re-run writes nothing twice; the judge's cache makes a re-judged transcript free. An answer that never
 * parses is reported in `failures` and writes nothing. When the token or cost budget runs out, calls in flight finish,
 * no new call starts, and `budgetExhausted` holds the message.
 */
export async function judgeStore(
  store: LightningStore,
  judge: LlmJudge,
  options: JudgeStoreOptions = {},
): Promise<JudgeStoreReport> {
  const rollouts = await recordedRollouts(store, {
    statuses: options.statuses ?? ['succeeded', 'failed'],
    since: options.since,
    until: options.until,
  });
  const report: JudgeStoreReport = {
    ...{ rollouts: rollouts.length, judged: 0, cached: 0, alreadyJudged: 0, rewarded: 0, failures: [], notJudged: 0 },
    ...{ budgetExhausted: null, usage: judge.client.usage },
  };
  const units = new Map<string, Unit>();
  for (const rollout of rollouts) {
    const spans = await latestSpans(store, rollout.rolloutId);
    if (spans.some((s) => isOwnJudgeSpan(s, judge))) {
      report.alreadyJudged += 1;
      continue;
    }
    if (options.onlyUnrewarded && findFinalReward(spans) !== null) {
      report.rewarded += 1;
      continue;
    }
    const key = options.groupBy === 'task' ? `task:${taskIdOf(rollout)}` : `rollout:${rollout.rolloutId}`;
    const unit = units.get(key) ?? { rollouts: [], transcripts: [] };
    unit.rollouts.push(rollout);
    unit.transcripts.push(rolloutTranscript(spans, rollout.input));
    units.set(key, unit);
  }

  const queue = [...units.values()];
  let fatal: unknown = null;
  const judgeUnit = async (unit: Unit): Promise<void> => {
    const mode = unit.rollouts.length > 1 ? 'group' : 'rubric';
    let scores: JudgeResult[];
    try {
      scores =
        mode === 'group' ? await judge.group(unit.transcripts) : [await judge.rubric(unit.transcripts[0] as string)];
    } catch (err) {
      if (err instanceof JudgeAnswerError) {
        report.failures.push({ rolloutIds: unit.rollouts.map((r) => r.rolloutId), message: err.message });
        return;
      }
      throw err;
    }
    for (const [i, rollout] of unit.rollouts.entries()) {
      const score = scores[i] as JudgeResult;
      await recordRewardSpan(store, rollout.rolloutId, judgeSpanAttributes(judge, score, mode));
      report.judged += 1;
      if (score.cached) report.cached += 1;
      options.onScore?.({ rolloutId: rollout.rolloutId, reward: score.reward, cached: score.cached });
    }
  };
  const worker = async (): Promise<void> => {
    for (let unit = queue.shift(); unit; unit = queue.shift()) {
      if (report.budgetExhausted !== null || fatal !== null) {
        report.notJudged += unit.rollouts.length;
        continue;
      }
      try {
        await judgeUnit(unit);
      } catch (err) {
        if (BudgetExceededError.isInstance(err)) {
          report.budgetExhausted ??= err.message;
          report.notJudged += unit.rollouts.length;
        } else {
          fatal ??= err;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  if (fatal !== null) throw fatal;
  report.usage = judge.client.usage;
  return report;
}
