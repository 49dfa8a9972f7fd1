import type { Worker } from 'node:worker_threads';
import { AglError, NotFoundError, UserError, ValidationError } from '@agl/core/errors';
import type { TinyConfig } from '../model/tiny-config';
import type { TinyWeights } from '../model/tiny-weights';
import { WeightStore } from '../model/weight-store';
import { loadCheckpoint } from '../train/checkpoint';
import type { TrainRow } from '../train/batch';
import type {
  OptimizerOptions,
  PolicySample,
  PolicyStepOptions,
  PolicyStepResult,
  SftAccuracy,
  SftExample,
  SftStepResult,
} from '../train/train-types';
import type { AdamStepParams, ForwardBackwardInput, ForwardBackwardResult } from '../train/primitive-steps';
import { spawnWorker } from './spawn-worker';

/** Options of {@link TinyTrainer.create}. */
export interface TinyTrainerOptions {
  /** Directory of versioned weights; `save()` writes here. */
  weightsDir: string;
  /** Start from these weights, or from a saved `version` (default: the latest in `weightsDir`). */
  weights?: TinyWeights;
  version?: string;
  /**
   * Resume from a checkpoint file written by `saveCheckpoint()` (weights and Adam state; wins over `weights` and
   * `version`). Pass `reference: { version }` explicitly when resuming: `'initial'` would mean the checkpoint's weights.
   */
  checkpoint?: string;
  optimizer?: OptimizerOptions;
  /** Frozen reference for the KL term: `initial` (the starting weights), a saved version name, or weights. */
  reference?: 'initial' | { version: string } | TinyWeights;
}

/**
 * Trains the embedded policy in a worker thread, so the caller's event loop (heartbeats, HTTP servers) keeps running
 * while tfjs computes. Every method maps to `TrainerCore`'s method of the same name.
 */
export class TinyTrainer {
  readonly weightsDir: string;
  readonly config: TinyConfig;
  readonly #worker: Worker;
  readonly #calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #next = 1;

  private constructor(worker: Worker, weightsDir: string, config: TinyConfig) {
    this.#worker = worker;
    this.weightsDir = weightsDir;
    this.config = config;
  }

  /** Starts the worker and loads the starting weights into trainable variables. */
  static async create(options: TinyTrainerOptions): Promise<TinyTrainer> {
    const store = new WeightStore({ dir: options.weightsDir });
    const resumed = options.checkpoint ? await loadCheckpoint(options.checkpoint) : undefined;
    let weights = resumed?.weights ?? options.weights;
    if (!weights) {
      const version = options.version ?? (await store.latest());
      if (!version)
        throw new UserError(`No weights in ${options.weightsDir}; pass \`weights\` or save a version first.`);
      weights = (await store.load(version)).weights;
    }
    let reference: TinyWeights | 'initial' | undefined;
    if (options.reference === 'initial') reference = 'initial';
    else if (options.reference && 'version' in options.reference)
      reference = (await store.load(options.reference.version)).weights;
    else reference = options.reference as TinyWeights | undefined;
    const worker = spawnWorker('trainer-worker');
    const trainer = new TinyTrainer(worker, options.weightsDir, weights.config);
    worker.on('message', (m: { id: number; result?: unknown; error?: { name: string; message: string } }) =>
      trainer.#onMessage(m),
    );
    worker.on('error', (err) => trainer.#failAll(err));
    try {
      await trainer.#call('init', {
        weights,
        optimizer: options.optimizer,
        reference,
        optimizerState: resumed?.optimizer,
      });
    } catch (err) {
      await worker.terminate();
      throw err;
    }
    return trainer;
  }

  /** One SFT Adam step on rows (ids + assistant mask). */
  sftStep(rows: TrainRow[]): Promise<SftStepResult> {
    return this.#call('sftStep', rows) as Promise<SftStepResult>;
  }

  /** `steps` SFT steps on seeded random minibatches of chat examples; loss on assistant tokens only. */
  sft(options: { examples: SftExample[]; steps: number; batchSize?: number; seed?: number }): Promise<SftStepResult[]> {
    return this.#call('sft', options) as Promise<SftStepResult[]>;
  }

  /** Renders chat examples into training rows (ids + assistant mask). */
  sftRows(examples: SftExample[]): Promise<TrainRow[]> {
    return this.#call('sftRows', examples) as Promise<TrainRow[]>;
  }

  /** Mean SFT loss without an update. */
  sftLoss(rows: TrainRow[]): Promise<number> {
    return this.#call('sftLoss', rows) as Promise<number>;
  }

  /** Teacher-forced accuracy on rows, no update; `exactMatch` is the share greedy decoding reproduces exactly. */
  sftAccuracy(rows: TrainRow[]): Promise<SftAccuracy> {
    return this.#call('sftAccuracy', rows) as Promise<SftAccuracy>;
  }

  /** One clipped policy-gradient step (GRPO/PPO) with optional KL to the reference. */
  policyStep(options: PolicyStepOptions): Promise<PolicyStepResult> {
    return this.#call('policyStep', options) as Promise<PolicyStepResult>;
  }

  /** Tinker's `forward_backward` (summed loss; gradients accumulate until {@link TinyTrainer.optimStep}). */
  forwardBackward(input: ForwardBackwardInput): Promise<ForwardBackwardResult> {
    return this.#call('forwardBackward', input) as Promise<ForwardBackwardResult>;
  }

  /** Tinker's `optim_step`: one Adam(W) step with the accumulated gradients. */
  optimStep(params: AdamStepParams): Promise<Record<string, number>> {
    return this.#call('optimStep', params) as Promise<Record<string, number>>;
  }

  /** Response-token logprobs under the current weights. */
  responseLogprobs(samples: Array<Pick<PolicySample, 'promptTokenIds' | 'responseTokenIds'>>): Promise<number[][]> {
    return this.#call('responseLogprobs', samples) as Promise<number[][]>;
  }

  /** The current weights. */
  weights(): Promise<TinyWeights> {
    return this.#call('weights', undefined) as Promise<TinyWeights>;
  }

  /** Saves the current weights as a new version in `weightsDir`; returns the file path. */
  save(options: { version: string; meta?: Record<string, unknown>; overwrite?: boolean }): Promise<string> {
    return this.#call('save', { dir: this.weightsDir, ...options }) as Promise<string>;
  }

  /** Writes weights + Adam state to `path` (atomically), for an exact resume with `create({ checkpoint })`. */
  saveCheckpoint(options: { path: string; meta?: Record<string, unknown> }): Promise<void> {
    return this.#call('saveCheckpoint', options) as Promise<void>;
  }

  /** Adam steps taken so far (including those before a resumed checkpoint). */
  steps(): Promise<number> {
    return this.#call('steps', undefined) as Promise<number>;
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    this.#failAll(new AglError('The tiny-llm trainer was closed.'));
    await this.#worker.terminate();
  }

  #call(method: string, args: unknown): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#calls.set(id, { resolve, reject });
      this.#worker.postMessage({ id, method, args });
    });
  }

  #onMessage(m: { id: number; result?: unknown; error?: { name: string; message: string } }): void {
    const call = this.#calls.get(m.id);
    if (!call) return;
    this.#calls.delete(m.id);
    if (!m.error) call.resolve(m.result);
    else if (m.error.name === 'AGL_UserError') call.reject(new UserError(m.error.message));
    else if (m.error.name === 'AGL_NotFoundError') call.reject(new NotFoundError('weights', '', m.error.message));
    else if (m.error.name === 'AGL_ValidationError') call.reject(new ValidationError(m.error.message));
    else call.reject(new AglError(`tiny-llm trainer: ${m.error.message}`));
  }

  #failAll(err: Error): void {
    for (const c of this.#calls.values()) c.reject(err);
    this.#calls.clear();
  }
}
