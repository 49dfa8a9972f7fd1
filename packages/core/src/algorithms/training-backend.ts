import type { LightningStore } from '../store/index';
import type { NamedResourcesInput, ResourcesUpdate } from '../schema/index';
import { mean, populationStd } from './grouped-scores';
import type { TrainingSample } from './training-sample';

/** Metrics of one training step. `null` where the backend cannot measure a value. */
export interface TrainMetrics {
  /** Policy loss of the step. */
  loss: number;
  /** Mean KL(old ‖ new) (or to the reference policy) over trained tokens. */
  kl: number | null;
  /** Mean policy entropy over trained tokens. */
  entropy: number | null;
  /** Fraction of trained tokens whose ratio was clipped. */
  clipFraction: number | null;
  /** Mean reward of the samples. */
  rewardMean: number;
  /** Population std of the samples' rewards. */
  rewardStd: number;
  /** Trained tokens per second of wall time. */
  tokensPerSecond: number;
  /** Backend-specific extras. */
  [extra: string]: number | null;
}

/** What a training step returns. */
export interface TrainResult {
  /**
   * The resources to publish after the weight update: an LLM resource that names the endpoint serving the new weights
   * and its model (version). The algorithm posts them as a new resources version ({@link publishTrainedResources}).
   */
  resources: NamedResourcesInput;
  metrics: TrainMetrics;
}

/**
 * Anything that turns samples into new weights: the embedded tfjs GRPO, or a bridge to a GPU trainer. A weight update
 * publishes a new LLM resource version, so rollouts always record which policy produced them (Contract 4).
 */
export interface TrainingBackend {
  /** One update on `samples`. Rejects with an AbortError-like error when `signal` aborts. */
  train(samples: readonly TrainingSample[], options: { signal?: AbortSignal }): Promise<TrainResult>;
}

/** Reward mean and population std of a batch (the `rewardMean` / `rewardStd` metrics). */
export function rewardStatistics(samples: readonly Pick<TrainingSample, 'reward'>[]): {
  rewardMean: number;
  rewardStd: number;
} {
  const rewards = samples.map((s) => s.reward);
  return { rewardMean: mean(rewards), rewardStd: populationStd(rewards) };
}

/**
 * Publishes a training result as a new resources version: `addResources` (a new `rs-` id, the default), or
 * `updateResources(resourcesId, …)` when an id is given (same id, version + 1). Prefer the default: rollouts record
 * only the resources id, so a fresh id per weight update keeps every reward traceable to the policy that earned it
 * (Contract 4). Returns the stored update, which is now the latest.
 */
export async function publishTrainedResources(options: {
  store: Pick<LightningStore, 'addResources' | 'updateResources'>;
  result: Pick<TrainResult, 'resources'>;
  resourcesId?: string;
}): Promise<ResourcesUpdate> {
  const { store, result, resourcesId } = options;
  return resourcesId === undefined
    ? store.addResources(result.resources)
    : store.updateResources(resourcesId, result.resources);
}
