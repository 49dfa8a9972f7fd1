import { readFile, rename, writeFile } from 'node:fs/promises';
import type { NamedResourcesInput } from '@agl/core';
import { rewardStatistics, type TrainingSample, type TrainResult } from '@agl/core/algorithms';
import { AglError, UserError } from '@agl/core/errors';
import { policyDatums, type PolicyDatum, type TinkerLossAggregation } from './tinker-datums';

/**
 * The Tinker training primitives the backend drives: `@agl/tinker`'s `TrainingClient` has them, against hosted Tinker,
 * a self-hosted Tinker-compatible server, or the embedded policy (`agl-tiny serve --tinker`).
 */
export interface TinkerTrainingApi {
  readonly modelId: string;
  forwardBackward(
    data: PolicyDatum[],
    lossFn: 'importance_sampling' | 'ppo',
    options?: { lossFnConfig?: Record<string, number> },
  ): Promise<{ metrics: Record<string, number> }>;
  optimStep(adam?: {
    learningRate?: number;
    beta1?: number;
    beta2?: number;
    eps?: number;
    weightDecay?: number;
    gradClipNorm?: number;
  }): Promise<unknown>;
  saveWeightsForSampler(name: string): Promise<{ path: string }>;
  saveWeights(name: string): Promise<{ path: string }>;
  loadWeights(path: string, options?: { optimizer?: boolean }): Promise<unknown>;
}

/** Options of {@link TinkerTrainingBackend}. */
export interface TinkerTrainingBackendOptions {
  /** The training model (a LoRA model created on the base model). */
  training: TinkerTrainingApi;
  /** The Tinker base URL, the endpoint of the published LLM resource (the gateway samples through it). */
  baseUrl: string;
  /** Name of the LLM resource. Default `main_llm`. */
  resourceName?: string;
  /** Sampling parameters put on the published resource (e.g. temperature). */
  samplingParameters?: Record<string, number>;
  /** The resources that make rollouts sample `samplerPath`; default an LLM resource `{ endpoint: baseUrl, model: samplerPath }`. */
  resourcesFor?: (samplerPath: string) => NamedResourcesInput;
  /** `importance_sampling` (default) or `ppo` (clipped; `clipLow` / `clipHigh` ratios, default 0.8 / 1.2). */
  loss?: 'importance_sampling' | 'ppo';
  clipLow?: number;
  clipHigh?: number;
  /** Adam learning rate. Default 4e-5 (the cookbook's LoRA RL rate); a number or a schedule by step (1, 2, …). */
  learningRate?: number | ((step: number) => number);
  /** Adam's other parameters (Tinker's defaults when unset); `gradClipNorm` 0 = none. */
  adam?: { beta1?: number; beta2?: number; eps?: number; weightDecay?: number; gradClipNorm?: number };
  /** How the summed loss is scaled. Default `token-mean`. */
  aggregation?: TinkerLossAggregation;
  /** `save_weights` (the resumable state) every N steps. Default 1. */
  saveEvery?: number;
  /** Called with the datums of each step before `forward_backward` (inspection, tests). */
  onDatums?: (datums: PolicyDatum[], samples: readonly TrainingSample[]) => void;
}

/** What `saveCheckpoint` writes: enough to resume with `load_weights`. */
interface TinkerCheckpoint {
  step: number;
  statePath: string | null;
  samplerPath: string | null;
  modelId: string;
}

/**
 * GRPO's (and any sample-based algorithm's) {@link TrainingBackend} over Tinker's primitives: samples → datums
 * (`target_tokens` = sampled ids, `logprobs` = sampling logprobs, per-token `advantages`, all-zero groups skipped) →
 * `forward_backward` → `optim_step` → `save_weights_for_sampler` → resources naming the new sampler path, so the next
 * round samples from it. `saveCheckpoint` saves the state (`save_weights`) every `saveEvery` steps; `restore` resumes
 * it with `load_weights` (optimizer included) on a new training model.
 */
export class TinkerTrainingBackend {
  readonly #o: TinkerTrainingBackendOptions;
  #step = 0;
  #samplerPath: string | null = null;
  #statePath: string | null = null;
  /** Every step's record, in order. */
  readonly history: Array<{ step: number; samplerPath: string; loss: number; tokens: number; skippedGroups: number }> =
    [];

  constructor(options: TinkerTrainingBackendOptions) {
    const every = options.saveEvery ?? 1;
    if (!Number.isInteger(every) || every < 1)
      throw new UserError(`saveEvery must be a positive integer (steps between save_weights); got ${String(every)}.`);
    this.#o = options;
  }

  /** The last saved sampler path (null before the first step). */
  get samplerPath(): string | null {
    return this.#samplerPath;
  }

  /** The LLM resources that sample `samplerPath`. */
  resourcesFor(samplerPath: string): NamedResourcesInput {
    const o = this.#o;
    if (o.resourcesFor) return o.resourcesFor(samplerPath);
    return {
      [o.resourceName ?? 'main_llm']: {
        resourceType: 'llm',
        endpoint: o.baseUrl,
        model: samplerPath,
        samplingParameters: o.samplingParameters ?? {},
      },
    };
  }

  /** On resume: the resources of the restored sampler path (null before any step). */
  currentResources(): NamedResourcesInput | null {
    return this.#samplerPath === null ? null : this.resourcesFor(this.#samplerPath);
  }

  async train(samples: readonly TrainingSample[], options: { signal?: AbortSignal } = {}): Promise<TrainResult> {
    const o = this.#o;
    const started = Date.now();
    const batch = policyDatums(samples, { aggregation: o.aggregation });
    let loss = 0;
    if (batch.datums.length > 0) {
      if (options.signal?.aborted) throw new AglError(`Tinker training was aborted: ${String(options.signal.reason)}`);
      o.onDatums?.(
        batch.datums,
        batch.sampleIndex.map((i) => samples[i]!),
      );
      const loss_ = o.loss ?? 'importance_sampling';
      const out = await o.training.forwardBackward(
        batch.datums,
        loss_,
        loss_ === 'ppo'
          ? { lossFnConfig: { clip_low_threshold: o.clipLow ?? 0.8, clip_high_threshold: o.clipHigh ?? 1.2 } }
          : {},
      );
      loss = out.metrics['loss:sum'] ?? 0;
      const lr = typeof o.learningRate === 'function' ? o.learningRate(this.#step + 1) : (o.learningRate ?? 4e-5);
      await o.training.optimStep({ ...o.adam, learningRate: lr });
    }
    this.#step += 1;
    const name = String(this.#step).padStart(6, '0');
    const { path } = await o.training.saveWeightsForSampler(name);
    this.#samplerPath = path;
    this.history.push({
      step: this.#step,
      samplerPath: path,
      loss,
      tokens: batch.tokens,
      skippedGroups: batch.skippedGroups,
    });
    const seconds = Math.max((Date.now() - started) / 1000, 1e-9);
    return {
      resources: this.resourcesFor(path),
      metrics: {
        loss,
        kl: null,
        entropy: null,
        clipFraction: null,
        ...rewardStatistics(samples),
        tokensPerSecond: batch.tokens / seconds,
        tokens: batch.tokens,
        skippedGroups: batch.skippedGroups,
        trainedSamples: batch.datums.length,
      },
    };
  }

  /**
   * Called by GRPO after each round: every `saveEvery` steps, `save_weights` (weights and Adam state) and a small
   * JSON at `path` naming it; returns whether it saved (GRPO records the round as resumable only then).
   */
  async saveCheckpoint(options: { path: string; meta?: Record<string, unknown> }): Promise<boolean> {
    if (this.#step === 0 || this.#step % (this.#o.saveEvery ?? 1) !== 0) return false;
    const name = String(this.#step).padStart(6, '0');
    this.#statePath = (await this.#o.training.saveWeights(name)).path;
    const ckpt: TinkerCheckpoint = {
      step: this.#step,
      statePath: this.#statePath,
      samplerPath: this.#samplerPath,
      modelId: this.#o.training.modelId,
    };
    await writeFile(`${options.path}.tmp`, JSON.stringify({ ...ckpt, meta: options.meta ?? {} }, null, 2));
    await rename(`${options.path}.tmp`, options.path);
    return true;
  }

  /** Resumes from a checkpoint `saveCheckpoint` wrote: `load_weights` (optimizer included) into this training model. */
  async restore(options: { path: string }): Promise<void> {
    let ckpt: TinkerCheckpoint;
    try {
      ckpt = JSON.parse(await readFile(options.path, 'utf8')) as TinkerCheckpoint;
    } catch (err) {
      throw new UserError(
        `Cannot read the Tinker checkpoint ${options.path} (${(err as Error).message}); start a fresh run or restore the file.`,
      );
    }
    if (ckpt.statePath) await this.#o.training.loadWeights(ckpt.statePath, { optimizer: true });
    this.#step = ckpt.step;
    this.#samplerPath = ckpt.samplerPath;
    this.#statePath = ckpt.statePath;
  }
}
