import type { Trajectory } from '../schema/index';
import { assignRewards, type RewardMode } from './reward-assignment';
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
 * Per-transition samples (AGL 0.3 triplets, verl's `transition` level): every call with token ids becomes one sample,
 * prompt = the call's prompt ids, response = its response ids with mask all 1, reward = the call's return `G_t`.
 * Calls without token ids are skipped and counted.
 */
export function transitionSamples(options: TransitionSamplesOptions): SamplesResult {
  const { trajectory, reward = {} } = options;
  validateLimits(options);
  const stats = emptySampleBuildStats();
  stats.nTrajectories = 1;
  const assigned = assignRewards({ trajectory, ...reward });
  if (assigned.hasReward) stats.nTrajectoriesWithReward = 1;
  const samples: TrainingSample[] = [];
  trajectory.transitions.forEach((transition, index) => {
    const tokens = turnTokens(transition);
    if (!tokens) {
      stats.nSkippedNoTokens += 1;
      return;
    }
    const sample = finaliseSample(
      {
        promptTokenIds: tokens.prompt,
        responseTokenIds: tokens.response,
        responseMask: tokens.response.map(() => 1),
        ...(tokens.logprobs ? { logprobs: tokens.logprobs } : {}),
        advantage: 0,
        groupId: trajectory.taskId,
        taskId: trajectory.taskId,
        rolloutId: trajectory.rolloutId,
        attemptId: trajectory.attemptId,
        mode: trajectory.mode,
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
