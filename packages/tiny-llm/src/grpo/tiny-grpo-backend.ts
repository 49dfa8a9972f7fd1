import type { NamedResourcesInput } from '@agl/core';
import { rewardStatistics, type TrainingBackend, type TrainResult, type TrainingSample } from '@agl/core/algorithms';
import { AglError } from '@agl/core/errors';
import type { PolicySample, PolicyStepResult } from '../train/train-types';
import type { TinyTrainer } from '../worker/tiny-trainer';

/** Options of {@link TinyGrpoBackend}. */
export interface TinyGrpoBackendOptions {
  /** The trainer whose weights are updated (its `weightsDir` must be the server's). */
  trainer: Pick<TinyTrainer, 'policyStep' | 'save' | 'saveCheckpoint'>;
  /** The server that serves the new versions (`loadWeights`) and whose URL goes into the published LLM resource. */
  server: { url: string; loadWeights(version: string): Promise<unknown> };
  /** Name of the LLM resource to publish. Default `main_llm`. */
  resourceName?: string;
  /** Served model id prefix. Default `agl-tiny`. */
  modelName?: string;
  /** Sampling parameters put on the published resource. */
  samplingParameters?: Record<string, number>;
  /** PPO clip range. Default 0.2. */
  clipEps?: number;
  /** KL-to-reference weight (the trainer needs a `reference`). Default 0. */
  klCoef?: number;
  /** Loss aggregation. Default `token-mean`. */
  lossAggregation?: 'token-mean' | 'sequence-mean';
  /** Policy steps (minibatch passes) per `train` call. Default 1. */
  stepsPerTrain?: number;
  /** Learning rate of the policy steps that make weights version `n` (1, 2, …); default: the trainer's own rate. */
  learningRate?: (version: number) => number;
  /** Version names: `<prefix><n>`. Default `grpo-`. */
  versionPrefix?: string;
  /** Number of the first version this backend writes (set when resuming). Default 1. */
  firstVersion?: number;
  /** The version the server serves now (when resuming), for {@link TinyGrpoBackend.currentResources}. */
  servedVersion?: string;
}

/**
 * The embedded policy's GRPO {@link TrainingBackend}: clipped policy gradient with the samples' advantages, the ratio
 * taken against the logprobs recorded at rollout time, optional KL to the reference, Adam with gradient clipping (all in
 * `TinyTrainer.policyStep`); then saves a new weights version, serves it, and returns the LLM resource naming it.
 */
export class TinyGrpoBackend implements TrainingBackend {
  readonly #o: TinyGrpoBackendOptions;
  #n: number;
  /** The last version this backend saved or serves (null before the first update). */
  lastVersion: string | null;
  /** Metrics of every policy step, in order. */
  readonly history: PolicyStepResult[] = [];

  constructor(options: TinyGrpoBackendOptions) {
    this.#o = options;
    this.#n = options.firstVersion ?? 1;
    this.lastVersion = options.servedVersion ?? null;
  }

  /** Resources for the version this backend last saved or was told is served (null before any). */
  currentResources(): NamedResourcesInput | null {
    return this.lastVersion === null ? null : this.resourcesFor(this.lastVersion);
  }

  /** The LLM resources that route calls to `version` on the server. */
  resourcesFor(version: string): NamedResourcesInput {
    const o = this.#o;
    return {
      [o.resourceName ?? 'main_llm']: {
        resourceType: 'llm',
        endpoint: `${o.server.url}/v1`,
        model: `${o.modelName ?? 'agl-tiny'}@${version}`,
        samplingParameters: o.samplingParameters ?? {},
      },
    };
  }

  async train(samples: readonly TrainingSample[], options: { signal?: AbortSignal } = {}): Promise<TrainResult> {
    const o = this.#o;
    const policySamples = samples.filter((s) => s.advantage !== 0).map(toPolicySample);
    const started = Date.now();
    let last: PolicyStepResult | null = null;
    let tokens = 0;
    const learningRate = o.learningRate?.(this.#n);
    for (let i = 0; i < (o.stepsPerTrain ?? 1) && policySamples.length > 0; i += 1) {
      if (options.signal?.aborted) throw new AglError(`GRPO training was aborted: ${String(options.signal.reason)}`);
      last = await o.trainer.policyStep({
        samples: policySamples,
        clipEps: o.clipEps ?? 0.2,
        klCoef: o.klCoef ?? 0,
        lossAggregation: o.lossAggregation,
        ...(learningRate === undefined ? {} : { learningRate }),
      });
      this.history.push(last);
      tokens += last.tokens;
    }
    const version = `${o.versionPrefix ?? 'grpo-'}${this.#n}`;
    this.#n += 1;
    await o.trainer.save({ version, meta: { algorithm: 'grpo', samples: samples.length }, overwrite: true });
    await o.server.loadWeights(version);
    this.lastVersion = version;
    const seconds = Math.max((Date.now() - started) / 1000, 1e-9);
    return {
      resources: this.resourcesFor(version),
      metrics: {
        loss: last?.loss ?? 0,
        kl: last ? last.kl : null,
        entropy: last ? last.entropy : null,
        clipFraction: last ? last.clipFraction : null,
        ...rewardStatistics(samples),
        tokensPerSecond: tokens / seconds,
        approxKlOld: last ? last.approxKlOld : null,
        gradNorm: last ? last.gradNorm : null,
        trainedSamples: policySamples.length,
      },
    };
  }

  /** Weights + Adam state, for an exact resume (`TinyTrainer.create({ checkpoint })`). */
  async saveCheckpoint(options: { path: string; meta?: Record<string, unknown> }): Promise<void> {
    await this.#o.trainer.saveCheckpoint(options);
  }
}

/** Contract 3 sample → the trainer's sample (mask and logprobs kept, advantage per sequence). */
export function toPolicySample(s: TrainingSample): PolicySample {
  return {
    promptTokenIds: [...s.promptTokenIds],
    responseTokenIds: [...s.responseTokenIds],
    responseMask: [...s.responseMask],
    ...(s.logprobs ? { logprobs: [...s.logprobs] } : {}),
    advantage: s.advantage,
    groupId: s.groupId,
  };
}
