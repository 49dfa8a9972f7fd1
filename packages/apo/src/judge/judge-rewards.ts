import type { Span } from '@agl/core/schema';
import type { RewardHook } from '@agl/trainer';
import type { LlmJudge } from './llm-judge';
import { rolloutTranscript } from './transcript';

/** What a judge reads: a transcript text, or a rollout's spans (and its task input), rebuilt into one. */
export type JudgedConversation = string | { spans: readonly Span[]; input?: unknown };

const textOf = (c: JudgedConversation): string => (typeof c === 'string' ? c : rolloutTranscript(c.spans, c.input));

/**
 * The rubric judge's reward in [0, 1] for one conversation: what an agent returns (or a runner writes) as the
 * rollout's reward where no reward function exists.
 */
export async function rubricReward(judge: LlmJudge, conversation: JudgedConversation): Promise<number> {
  return (await judge.rubric(textOf(conversation))).reward;
}

/** The group judge's rewards for N runs of one task (a GRPO group, APO candidates), one per run, in order. */
export async function groupRewards(judge: LlmJudge, conversations: readonly JudgedConversation[]): Promise<number[]> {
  return (await judge.group(conversations.map(textOf))).map((s) => s.reward);
}

/**
 * A runner reward hook (`new Trainer({ reward: judgeRewardHook(judge) })`): a rollout that ends without a reward gets
 * the rubric judge's score of its spans, with the task as the transcript's `<task>`.
 */
export function judgeRewardHook(judge: LlmJudge): RewardHook {
  return (task, _result, spans) => rubricReward(judge, { spans, input: task });
}
