/**
 * `@agl/core/algorithms`: the engine-independent side of RL. Trajectories → rewards → training samples (per call or
 * aggregated per trajectory) → advantages (GRPO, RLOO, rollout-level), and the `TrainingBackend` interface. Pure code.
 */
export {
  emptySampleBuildStats,
  addSampleBuildStats,
  trainedTokenCount,
  type TrainingSample,
  type SampleBuildStats,
} from './training-sample';
export {
  assignRewards,
  resolveFinalReward,
  type RewardMode,
  type AssignRewardsOptions,
  type AssignedRewards,
} from './reward-assignment';
export { turnTokens, finaliseSample, type TurnTokens, type SampleLimits } from './sample-tokens';
export {
  transitionSamples,
  type TransitionSamplesOptions,
  type RewardOptions,
  type SamplesResult,
} from './transition-samples';
export { aggregateTrajectory, type AggregateTrajectoryOptions } from './trajectory-aggregation';
export { mean, sampleStd, populationStd, type GroupedScores } from './grouped-scores';
export { grpoAdvantages, type GrpoAdvantagesOptions } from './grpo-advantages';
export { rlooAdvantages } from './rloo-advantages';
export { firstDivergenceCredit, NEGATIVE_CREDITS, type NegativeCredit } from './divergence-credit';
export {
  sampleAdvantages,
  rolloutLevelAdvantages,
  normalisePerRolloutLoss,
  type OutcomeEstimator,
  type AdvantageOptions,
  type RolloutLevelStats,
} from './rollout-level-advantages';
export {
  buildTrainingSamples,
  type AggregationLevel,
  type AdvantageConfig,
  type BuildTrainingSamplesOptions,
  type TrainingSampleBatch,
} from './build-training-samples';
export {
  rewardStatistics,
  publishTrainedResources,
  type TrainingBackend,
  type TrainResult,
  type TrainMetrics,
} from './training-backend';
