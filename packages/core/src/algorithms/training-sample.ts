import type { RolloutMode } from '../schema/index';

/**
 * One training row (DESIGN.md Contract 3): a prompt, a response whose tokens are either trained (mask 1, produced by
 * the policy) or context (mask 0, tool and observation tokens inserted between calls), and one scalar advantage that
 * applies to every trained token.
 *
 * Per-token advantages are `advantage × responseMask[i]`; the verl export writes them that way.
 */
export interface TrainingSample {
  /** Prompt token ids (the first call's prompt for an aggregated sample). */
  promptTokenIds: number[];
  /** Response token ids: model tokens and, in aggregated samples, the observation tokens between calls. */
  responseTokenIds: number[];
  /** 1 for tokens the policy produced (trained), 0 for tool/observation tokens; same length as `responseTokenIds`. */
  responseMask: number[];
  /**
   * Log-probability of each response token under the policy that sampled it (0 at mask-0 positions); absent when any
   * merged call lacked logprobs.
   */
  logprobs?: number[];
  /** The scalar advantage (0 until an estimator runs). */
  advantage: number;
  /** Group key of GRPO/RLOO baselines: the task id (verl's `uid`, written as `data_id`). */
  groupId: string;
  /** Task id of the trajectory (`rollout.metadata.task_id`). Equals `groupId` unless the caller regrouped. */
  taskId: string;
  /** Rollout that produced the sample. */
  rolloutId: string;
  /** Attempt that produced the sample. */
  attemptId: string;
  /** Rollout mode. */
  mode: RolloutMode;
  /** The scalar reward this sample is scored with (see `assignRewards`): the return from its first call. */
  reward: number;
  /** Indices of the trajectory's transitions merged into this sample, in order. */
  turnIndices: number[];
  /** Agent of the first merged call, or `null`. */
  agentName: string | null;
}

/** Counters of a sample build, named after AGL 1.0's `training/*` metrics where one exists. */
export interface SampleBuildStats {
  /** Trajectories seen. */
  nTrajectories: number;
  /** Trajectories that produced at least one sample (`n_rollouts_w_trace`). */
  nTrajectoriesWithSamples: number;
  /** Trajectories that carry a reward (final or intermediate) (`n_rollouts_w_reward`). */
  nTrajectoriesWithReward: number;
  /** Samples produced (`n_sample`). */
  nSamples: number;
  /** Transitions merged or turned into samples (`n_turns`). */
  nTurns: number;
  /** Prefix breaks: a call whose prompt did not continue the running context exactly (trajectory level only). */
  nMismatches: number;
  /** Trajectories split into more than one sample (`n_unmerged_rollouts`). */
  nUnmergedTrajectories: number;
  /** Transitions skipped because prompt or response token ids were missing or empty. */
  nSkippedNoTokens: number;
  /** Samples whose response was cut to `maxResponseLength` (`n_truncated_sample`). */
  nTruncated: number;
  /** Samples dropped because the prompt exceeded `maxPromptLength` (verl's `is_drop`). */
  nDroppedPromptTooLong: number;
}

/** Fresh zeroed {@link SampleBuildStats}. */
export function emptySampleBuildStats(): SampleBuildStats {
  return {
    nTrajectories: 0,
    nTrajectoriesWithSamples: 0,
    nTrajectoriesWithReward: 0,
    nSamples: 0,
    nTurns: 0,
    nMismatches: 0,
    nUnmergedTrajectories: 0,
    nSkippedNoTokens: 0,
    nTruncated: 0,
    nDroppedPromptTooLong: 0,
  };
}

/** Adds `b`'s counters into `a` (mutates and returns `a`). */
export function addSampleBuildStats(a: SampleBuildStats, b: SampleBuildStats): SampleBuildStats {
  for (const key of Object.keys(a) as Array<keyof SampleBuildStats>) a[key] += b[key];
  return a;
}

/** Number of trained (mask-1) tokens of a sample. */
export function trainedTokenCount(sample: Pick<TrainingSample, 'responseMask'>): number {
  let n = 0;
  for (const m of sample.responseMask) n += m;
  return n;
}
