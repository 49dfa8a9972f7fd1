import type { Trajectory } from '@agl/core';
import { buildTrainingSamples, type NegativeCredit, type TrainingSample } from '@agl/core/algorithms';
import { agentMatcher, type AgentMatch } from '@agl/core/transitions';

/**
 * How a sample-based algorithm scores a group (the `tasksPerRound × groupSize` rollouts of one round):
 * - `grpo`: group-relative advantages (reward minus the group mean, divided by the group std);
 * - `rloo`: leave-one-out baseline (reward minus the mean of the other rollouts of the group);
 * - `rejection-sampling`: advantage 1 on the best rollout of each group whose reward reaches `minReward`, 0 elsewhere
 *   (with the `importance_sampling` loss on freshly sampled tokens this is supervised fine-tuning on the kept rollouts).
 */
export type SampleEstimator = 'grpo' | 'rloo' | 'rejection-sampling';

/** Estimators {@link SampleEstimator} names, in the order the CLI lists them. */
export const SAMPLE_ESTIMATORS: readonly SampleEstimator[] = ['grpo', 'rloo', 'rejection-sampling'];

/** What {@link roundSamples} needs. */
export interface RoundSampleOptions {
  estimator?: SampleEstimator;
  /** `rejection-sampling`: the lowest reward a kept rollout may have (default 1). */
  minReward?: number;
  control?: 'none' | 'shuffled-rewards' | 'zero-advantages';
  negativeCredit?: NegativeCredit;
  /** Only these agents' transitions train (AGL 0.3 `agentMatch`: a RegExp is searched, a string must equal). */
  agentMatch?: AgentMatch | null;
  maxPromptLength?: number;
  maxResponseLength?: number;
}

/**
 * One round's trajectories → training samples: the agent filter, the controls, then the estimator's advantages
 * (trajectory level: calls whose token ids continue exactly are merged; the final reward scores the rollout).
 */
export function roundSamples(trajectories: Trajectory[], o: RoundSampleOptions, rng: () => number): TrainingSample[] {
  let input = trajectories;
  if (o.agentMatch != null) {
    const ok = agentMatcher(o.agentMatch);
    input = input.map((t) => ({
      ...t,
      transitions: t.transitions.filter((tr) => tr.agentName !== null && ok(tr.agentName)),
    }));
  }
  if (o.control === 'shuffled-rewards') {
    const rewards = input.map((t) => t.finalReward);
    for (let i = rewards.length - 1; i > 0; i -= 1) {
      const j = Math.floor(rng() * (i + 1));
      [rewards[i], rewards[j]] = [rewards[j]!, rewards[i]!];
    }
    input = input.map((t, i) => ({
      ...t,
      finalReward: rewards[i] ?? null,
      transitions: t.transitions.map((tr) => ({ ...tr, reward: null })),
    }));
  }
  const estimator = o.estimator ?? 'grpo';
  const { samples } = buildTrainingSamples({
    trajectories: input,
    level: 'trajectory',
    reward: { mode: 'final', discount: 1, fillValue: 0 },
    advantage:
      estimator === 'rejection-sampling'
        ? { estimator: 'none' }
        : { estimator, normalizeByStd: true, negativeCredit: o.negativeCredit },
    ...(o.maxPromptLength !== undefined ? { maxPromptLength: o.maxPromptLength } : {}),
    ...(o.maxResponseLength !== undefined ? { maxResponseLength: o.maxResponseLength } : {}),
  });
  const scored = estimator === 'rejection-sampling' ? bestOfGroup(samples, o.minReward ?? 1) : samples;
  return o.control === 'zero-advantages' ? scored.map((s) => ({ ...s, advantage: 0 })) : scored;
}

/** Advantage 1 on every sample of the best rollout of each group (first wins ties) at or above `minReward`. */
function bestOfGroup(samples: TrainingSample[], minReward: number): TrainingSample[] {
  const best = new Map<string, { rolloutId: string; reward: number }>();
  for (const s of samples) {
    const current = best.get(s.groupId);
    if (s.reward >= minReward && (!current || s.reward > current.reward))
      best.set(s.groupId, { rolloutId: s.rolloutId, reward: s.reward });
  }
  return samples.map((s) => ({ ...s, advantage: best.get(s.groupId)?.rolloutId === s.rolloutId ? 1 : 0 }));
}

/**
 * Trajectories grouped by task (in enqueue order of each task's first rollout), each group sorted by what the policy
 * said: which rollout of a task got which sample depends on arrival order, so this makes a round's training batch,
 * and with the tiny server's `samplingSeed` the whole run, independent of timing.
 */
export function canonicalOrder(trajectories: Trajectory[]): Trajectory[] {
  const groups = new Map<string, Array<{ t: Trajectory; k: string }>>();
  for (const t of trajectories) {
    const k = JSON.stringify([
      t.finalReward,
      t.transitions.map((tr) => tr.action.tokenIds ?? tr.action.message.content ?? null),
    ]);
    const group = groups.get(t.taskId) ?? [];
    group.push({ t, k });
    groups.set(t.taskId, group);
  }
  return [...groups.values()].flatMap((group) =>
    group.sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : 0)).map(({ t }) => t),
  );
}

/**
 * The off-policy rule (`maxStepsOffPolicy`): samples drawn from the weights of optimizer step `sampledAt` may train
 * the step after `trainedAfter` only when `trainedAfter − sampledAt ≤ maxStepsOffPolicy`. Returns the lag and whether
 * the samples are kept.
 */
export function offPolicyLag(
  sampledAt: number,
  trainedAfter: number,
  maxStepsOffPolicy: number,
): { lag: number; keep: boolean } {
  const lag = trainedAfter - sampledAt;
  return { lag, keep: lag <= maxStepsOffPolicy };
}
