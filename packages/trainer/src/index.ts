export {
  litAgent,
  toLitAgent,
  pickRolloutFn,
  type AgentContext,
  type AgentLike,
  type LitAgent,
  type RolloutFn,
  type RolloutResult,
} from './agent/lit-agent';
export { processAgent, ProcessAgent, type ProcessAgentOptions } from './agent/process-agent';
export { runFromEnv, readAgentEnv, postRewardEvent, type RunFromEnvResult } from './agent/run-from-env';
export { Runner, type RunnerOptions } from './runner/runner';
export type { RunnerHooks, HookEvent, RewardHook, RunnerLogger } from './runner/hooks';
export type { RunnerStats } from './runner/worker-loop';
export type { AgentModuleRef } from './runner/worker-processes';
export { processAgentEnv, llmBaseUrl, type ProcessEndpoints } from './runner/process-env';
export type { ProcessResult } from './runner/execute-process';
export { Trainer, type TrainerOptions, type FitResult } from './trainer/trainer';
export { Baseline, type BaselineOptions } from './algorithms/baseline';
export { GRPO, type GrpoOptions, type GrpoRunOptions, type GrpoRoundRecord, type GrpoBackend } from './algorithms/grpo';
export {
  TinkerTrainingBackend,
  type TinkerTrainingApi,
  type TinkerTrainingBackendOptions,
} from './algorithms/tinker-backend';
export {
  TinkerRl,
  tinkerGrpo,
  TINKER_RL_LOSSES,
  type TinkerRlOptions,
  type TinkerRlSummary,
} from './algorithms/tinker-rl';
export {
  roundSamples,
  canonicalOrder,
  offPolicyLag,
  SAMPLE_ESTIMATORS,
  type SampleEstimator,
  type RoundSampleOptions,
} from './algorithms/grpo-samples';
export {
  policyDatums,
  type PolicyDatum,
  type PolicyDatumBatch,
  type TinkerLossAggregation,
} from './algorithms/tinker-datums';
export {
  RolloutBatch,
  runRolloutBatch,
  startRolloutBatch,
  taskRequest,
  type RolloutBatchRun,
  type RolloutRequest,
  type TaskRequestOptions,
  type DrainOptions,
} from './algorithms/rollout-batch';
export {
  RejectionSamplingFineTuning,
  type RejectionSamplingOptions,
  type RoundReport,
} from './algorithms/rejection-sampling';
export type { Algorithm, AlgorithmRunOptions, TraceAdapter } from './algorithms/algorithm';
export { openStore, DEFAULT_STORE_PATH, type OpenedStore } from './trainer/open-store';
export { progressSnapshot, watchProgress, finalRewardOf, type ProgressSnapshot } from './trainer/progress';
export { formatProgress, formatRunSummary, storeFlagsFor, type RunSummary } from './trainer/run-summary';
export { trackRunRollouts, type RunRollouts } from './trainer/run-rollouts';
export { loadDataset, type DatasetSource } from './dataset/load-dataset';
export {
  buildDataset,
  datasetLine,
  inputHashFraction,
  rolloutSource,
  valPathOf,
  writeDatasetFiles,
  type BuildDatasetOptions,
  type BuiltDataset,
  type DatasetLine,
  type DatasetLineMeta,
} from './dataset/build-dataset';
export { parseTimeBound } from './dataset/time-bound';
export { recordedRollouts, latestSpans, type RecordedRolloutsOptions } from './dataset/recorded-rollouts';
