import { rewardStatistics, type TrainingSample, type TrainMetrics } from '@agl/core/algorithms';

/**
 * The metrics of a training step whose backend cannot see the policy (a hosted fine-tuning job, a scripted test
 * backend): the loss and throughput it reports, the batch's reward statistics, and `null` KL, entropy and clip fraction.
 */
export function stepMetricsWithoutPolicyStats(
  samples: readonly Pick<TrainingSample, 'reward'>[],
  measured: { loss: number; tokensPerSecond: number; [extra: string]: number | null },
): TrainMetrics {
  return { kl: null, entropy: null, clipFraction: null, ...rewardStatistics(samples), ...measured };
}
