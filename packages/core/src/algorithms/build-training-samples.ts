import { ValidationError } from '../errors/index';
import type { Trajectory } from '../schema/index';
import { firstDivergenceCredit, NEGATIVE_CREDITS, type NegativeCredit } from './divergence-credit';
import {
  normalisePerRolloutLoss,
  rolloutLevelAdvantages,
  sampleAdvantages,
  type OutcomeEstimator,
  type RolloutLevelStats,
} from './rollout-level-advantages';
import type { SampleLimits } from './sample-tokens';
import {
  addSampleBuildStats,
  emptySampleBuildStats,
  type SampleBuildStats,
  type TrainingSample,
} from './training-sample';
import { aggregateTrajectory } from './trajectory-aggregation';
import { transitionSamples, type RewardOptions } from './transition-samples';

/** `transition`: one sample per call (AGL 0.3 triplets); `trajectory`: merge calls that continue exactly (AGL 1.0). */
export type AggregationLevel = 'transition' | 'trajectory';

/** How advantages are computed. */
export interface AdvantageConfig {
  /** `grpo` (default), `rloo`, or `none` (advantage stays 0, e.g. when verl computes its own). */
  estimator?: OutcomeEstimator | 'none';
  /**
   * Score one representative row per rollout (AGL 1.0 §2.6). Default: true when every row of a rollout carries the
   * same reward (reward mode `final` without discount); otherwise rows carry different returns and are scored
   * individually.
   */
  rolloutLevel?: boolean;
  /** GRPO: divide by the group std. Default true. */
  normalizeByStd?: boolean;
  /** GRPO: added to the std. Default 1e-6. */
  epsilon?: number;
  /** Divide advantages by (rollout trained tokens × trained rows), AGL 1.0's `per_rollout_mean`. Default false. */
  perRolloutLossNormalisation?: boolean;
  /**
   * Which tokens of a worse-than-average sample carry its negative advantage: all trained tokens (`whole-response`,
   * default), or those up to where it diverged from a better sample of its group (`first-divergence`, see
   * {@link firstDivergenceCredit}).
   */
  negativeCredit?: NegativeCredit;
}

/** Options of {@link buildTrainingSamples}. */
export interface BuildTrainingSamplesOptions extends SampleLimits {
  trajectories: readonly Trajectory[];
  /** Default `trajectory` (AGL 1.0's default). */
  level?: AggregationLevel;
  reward?: RewardOptions;
  advantage?: AdvantageConfig;
}

/** What {@link buildTrainingSamples} returns. */
export interface TrainingSampleBatch {
  samples: TrainingSample[];
  stats: SampleBuildStats;
  /** Present when rollout-level advantages ran. */
  rolloutLevel?: RolloutLevelStats;
}

/**
 * Trajectories → scored training samples: assign rewards, build samples at the chosen level, then compute advantages.
 * Pure; the order of samples follows the order of trajectories and calls.
 */
export function buildTrainingSamples(options: BuildTrainingSamplesOptions): TrainingSampleBatch {
  const { trajectories, level = 'trajectory', reward = {}, advantage = {} } = options;
  const limits: SampleLimits = {
    ...(options.maxPromptLength !== undefined ? { maxPromptLength: options.maxPromptLength } : {}),
    ...(options.maxResponseLength !== undefined ? { maxResponseLength: options.maxResponseLength } : {}),
  };
  const stats = emptySampleBuildStats();
  let samples: TrainingSample[] = [];
  for (const trajectory of trajectories) {
    const built =
      level === 'transition'
        ? transitionSamples({ trajectory, reward, ...limits })
        : aggregateTrajectory({ trajectory, reward, ...limits });
    addSampleBuildStats(stats, built.stats);
    samples.push(...built.samples);
  }
  const oneRewardPerRollout = reward.mode !== 'intermediate' && (reward.discount ?? 1) === 1;
  const { estimator = 'grpo', rolloutLevel = oneRewardPerRollout, negativeCredit = 'whole-response' } = advantage;
  if (!NEGATIVE_CREDITS.includes(negativeCredit)) {
    const allowed = NEGATIVE_CREDITS.map((v) => `'${v}'`).join(' or ');
    throw new ValidationError(`unknown negativeCredit ${JSON.stringify(negativeCredit)}; use ${allowed}`, [
      { path: 'advantage.negativeCredit', message: `expected ${allowed}` },
    ]);
  }
  if (estimator === 'none') return { samples, stats };
  const config = {
    estimator,
    ...(advantage.normalizeByStd !== undefined ? { normalizeByStd: advantage.normalizeByStd } : {}),
    ...(advantage.epsilon !== undefined ? { epsilon: advantage.epsilon } : {}),
  };
  let rolloutStats: RolloutLevelStats | undefined;
  if (rolloutLevel) {
    const result = rolloutLevelAdvantages({ samples, ...config });
    samples = result.samples;
    rolloutStats = result.stats;
  } else {
    samples = sampleAdvantages({ samples, ...config });
  }
  if (negativeCredit === 'first-divergence') samples = firstDivergenceCredit(samples);
  if (advantage.perRolloutLossNormalisation) samples = normalisePerRolloutLoss({ samples });
  return { samples, stats, ...(rolloutStats ? { rolloutLevel: rolloutStats } : {}) };
}
