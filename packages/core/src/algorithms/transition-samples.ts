import type { Trajectory, Transition } from '../schema/index';
import { type AssignedRewards, assignRewards, type RewardMode } from './reward-assignment';
import { finaliseSample, turnTokens, validateLimits, type SampleLimits } from './sample-tokens';
import { emptySampleBuildStats, type SampleBuildStats, type TrainingSample } from './training-sample';

/** How rewards are assigned before scoring samples (see {@link assignRewards}). */
export interface RewardOptions {
  /** Default `final`. */
  mode?: RewardMode;
  /** γ in [0, 1]; default 1. */
  discount?: number;
  /** Reward of a trajectory that has none; default 0. */
  fillValue?: number;
}

/** Options of {@link transitionSamples}. */
export interface TransitionSamplesOptions extends SampleLimits {
  trajectory: Trajectory;
  reward?: RewardOptions;
}

/** Samples of one trajectory plus the build counters. */
export interface SamplesResult {
  samples: TrainingSample[];
  stats: SampleBuildStats;
}

/**
 * The start every per-trajectory sample build shares: the limits checked, the trajectory counted, its rewards
 * assigned (and counted when it has any).
 */
export function startSampleBuild(options: TransitionSamplesOptions): {
  stats: SampleBuildStats;
  assigned: AssignedRewards;
} {
  validateLimits(options);
  const stats = emptySampleBuildStats();
  stats.nTrajectories = 1;
  const assigned = assignRewards({ trajectory: options.trajectory, ...options.reward });
  if (assigned.hasReward) stats.nTrajectoriesWithReward = 1;
  return { stats, assigned };
}

/** The fields of a sample that come from its trajectory (group = task), advantage still 0. */
export const sampleOrigin = (
  trajectory: Trajectory,
): Pick<TrainingSample, 'advantage' | 'groupId' | 'taskId' | 'rolloutId' | 'attemptId' | 'mode'> => ({
  advantage: 0,
  groupId: trajectory.taskId,
  taskId: trajectory.taskId,
  rolloutId: trajectory.rolloutId,
  attemptId: trajectory.attemptId,
  mode: trajectory.mode,
});

/** Calls `visit` with each transition that has token ids, in order; the others are counted as skipped. */
export function forEachTurn(
  trajectory: Trajectory,
  stats: SampleBuildStats,
  visit: (tokens: NonNullable<ReturnType<typeof turnTokens>>, transition: Transition, index: number) => void,
): void {
  trajectory.transitions.forEach((transition, index) => {
    const tokens = turnTokens(transition);
    if (tokens) visit(tokens, transition, index);
    else stats.nSkippedNoTokens += 1;
  });
}

/**
 * Per-transition samples (AGL 0.3 triplets, verl's `transition` level): every call with token ids becomes one sample,
 * prompt = the call's prompt ids, response = its response ids with mask all 1, reward = the call's return `G_t`.
 * Calls without token ids are skipped and counted.
 */
export function transitionSamples(options: TransitionSamplesOptions): SamplesResult {
  const { trajectory } = options;
  const { stats, assigned } = startSampleBuild(options);
  const samples: TrainingSample[] = [];
  forEachTurn(trajectory, stats, (tokens, transition, index) => {
    const sample = finaliseSample(
      {
        promptTokenIds: tokens.prompt,
        responseTokenIds: tokens.response,
        responseMask: tokens.response.map(() => 1),
        ...(tokens.logprobs ? { logprobs: tokens.logprobs } : {}),
        ...sampleOrigin(trajectory),
        reward: assigned.returns[index] ?? 0,
        turnIndices: [index],
        agentName: transition.agentName,
      },
      options,
      stats,
    );
    if (sample) {
      samples.push(sample);
      stats.nTurns += 1;
    }
  });
  stats.nSamples = samples.length;
  if (samples.length > 0) stats.nTrajectoriesWithSamples = 1;
  return { samples, stats };
}
