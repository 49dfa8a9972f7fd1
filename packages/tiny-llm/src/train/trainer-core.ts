import type { Tensor, Variable } from '@tensorflow/tfjs';
import { UserError } from '@agl/core/errors';
import { renderChat } from '../chat/chat-template';
import { SeededRng } from '../model/rng';
import { paramShapes, type TinyConfig } from '../model/tiny-config';
import type { TinyWeights } from '../model/tiny-weights';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { packBatch, type PackedBatch, type TrainRow } from './batch';
import type { OptimizerTensor, TrainerState } from './checkpoint';
import {
  forwardBackward,
  optimStep,
  type AdamStepParams,
  type ForwardBackwardInput,
  type ForwardBackwardResult,
  type PrimitiveContext,
} from './primitive-steps';
import { loadTf, type Tf } from './tf-backend';
import { tfForward, tokenLogprobs } from './tf-forward';
import type {
  OptimizerOptions,
  PolicySample,
  PolicyStepOptions,
  PolicyStepResult,
  SftAccuracy,
  SftExample,
  SftStepResult,
} from './train-types';

let instances = 0;

/**
 * Trains the tiny model with tfjs in the calling thread (tfjs is synchronous: call it from a worker, or use
 * `TinyTrainer`, which does). Deterministic: the same weights, seed and batches give the same result.
 */
export class TrainerCore {
  readonly tf: Tf;
  readonly config: TinyConfig;
  readonly tokenizer: TinyTokenizer;
  readonly #vars: Record<string, Variable>;
  readonly #prefix: string;
  #ref: Record<string, Tensor> | undefined;
  #optimizer: ReturnType<Tf['train']['adam']>;
  readonly #maxGradNorm: number;
  readonly #padId: number;
  /** Gradients `forwardBackward` accumulated for the next `optimStep`. */
  readonly #accum = new Map<string, Tensor>();

  private constructor(tf: Tf, weights: TinyWeights, opt: OptimizerOptions) {
    this.tf = tf;
    this.config = { ...weights.config };
    this.tokenizer = new TinyTokenizer(weights.tokenizer);
    this.#padId = this.tokenizer.specialId('<|pad|>');
    this.#prefix = `agl_tiny_${process.pid}_${instances++}`;
    this.#vars = {};
    for (const p of paramShapes(this.config)) {
      const data = weights.params[p.name];
      if (!data) throw new UserError(`Weights lack parameter "${p.name}".`);
      this.#vars[p.name] = tf.variable(tf.tensor(data, p.shape), true, `${this.#prefix}/${p.name}`);
    }
    this.#optimizer = tf.train.adam(
      opt.learningRate ?? 1e-3,
      opt.beta1 ?? 0.9,
      opt.beta2 ?? 0.999,
      opt.epsilon ?? 1e-8,
    );
    this.#maxGradNorm = opt.maxGradNorm ?? 1;
  }

  /** Loads tfjs (wasm) and builds trainable variables from `weights`. */
  static async create(options: {
    weights: TinyWeights;
    optimizer?: OptimizerOptions;
    reference?: TinyWeights | 'initial';
    /** Adam state from {@link TrainerCore.exportState} (resuming from a checkpoint). */
    optimizerState?: OptimizerTensor[];
  }): Promise<TrainerCore> {
    const tf = await loadTf();
    const core = new TrainerCore(tf, options.weights, options.optimizer ?? {});
    if (options.optimizerState && options.optimizerState.length > 0) {
      await core.#optimizer.setWeights(
        options.optimizerState.map((t) => ({ name: t.name, tensor: tf.tensor(t.data, t.shape) })),
      );
    }
    if (options.reference) core.setReference(options.reference === 'initial' ? options.weights : options.reference);
    return core;
  }

  /** Sets (or clears) the frozen reference weights used by the KL term. */
  setReference(weights: TinyWeights | undefined): void {
    if (this.#ref) for (const t of Object.values(this.#ref)) t.dispose();
    this.#ref = undefined;
    if (!weights) return;
    this.#ref = {};
    for (const p of paramShapes(this.config)) this.#ref[p.name] = this.tf.tensor(weights.params[p.name]!, p.shape);
  }

  /** The current weights, copied out. */
  weights(): TinyWeights {
    const params: Record<string, Float32Array> = {};
    for (const [k, v] of Object.entries(this.#vars)) params[k] = new Float32Array(v.dataSync());
    return { config: { ...this.config }, tokenizer: this.tokenizer.spec, params };
  }

  /** Weights and Adam state, for a checkpoint that resumes training exactly. */
  async exportState(meta: Record<string, unknown> = {}): Promise<TrainerState> {
    const named = await this.#optimizer.getWeights();
    const optimizer = named.map(({ name, tensor }) => ({
      name,
      shape: tensor.shape.slice(),
      data: new Float32Array(tensor.dataSync()),
    }));
    return { weights: this.weights(), optimizer, meta };
  }

  /** Adam steps taken so far (restored from a checkpoint too). */
  get steps(): number {
    return (this.#optimizer as unknown as { iterations: number }).iterations;
  }

  /** Overwrites the trainable weights (the optimiser state is kept). */
  setWeights(weights: TinyWeights): void {
    for (const p of paramShapes(this.config))
      this.#vars[p.name]!.assign(this.tf.tensor(weights.params[p.name]!, p.shape));
  }

  /** Renders SFT examples into rows whose targets are the assistant tokens only. */
  sftRows(examples: readonly SftExample[]): TrainRow[] {
    return examples.map((ex) => {
      const r = renderChat({
        tokenizer: this.tokenizer,
        messages: ex.messages,
        tools: ex.tools,
        addGenerationPrompt: false,
      });
      return { ids: r.ids, mask: r.assistantMask };
    });
  }

  /** Mean next-token loss over masked targets (no update). */
  sftLoss(rows: readonly TrainRow[]): number {
    const batch = packBatch(this.config, rows, this.#padId);
    return this.tf.tidy(() => this.#sftLossTensor(batch, this.#vars).dataSync()[0]!);
  }

  /**
   * Teacher-forced accuracy on the masked (assistant) targets, no update: `tokenAccuracy` is the share of targets that
   * are the argmax of their position, `exactMatch` the share of rows whose every target is. A row that matches exactly
   * is one that greedy decoding reproduces token for token, so `exactMatch` is greedy success without generating.
   */
  sftAccuracy(rows: readonly TrainRow[]): SftAccuracy {
    const batch = packBatch(this.config, rows, this.#padId);
    const predicted = this.tf.tidy(() =>
      this.tf.argMax(tfForward(this.tf, this.config, this.#vars, batch.inputs), -1).dataSync(),
    );
    const T = batch.inputs[0]!.length;
    let right = 0;
    let exact = 0;
    for (let b = 0; b < rows.length; b++) {
      let rowExact = true;
      for (let k = b * T; k < (b + 1) * T; k++) {
        if (!batch.mask[k]) continue;
        if (predicted[k] === batch.targets[k]) right++;
        else rowExact = false;
      }
      if (rowExact) exact++;
    }
    return {
      tokenAccuracy: batch.tokens === 0 ? 0 : right / batch.tokens,
      exactMatch: exact / rows.length,
      tokens: batch.tokens,
      rows: rows.length,
    };
  }

  /** Gradients of {@link sftLoss} by parameter name (for checks; no update). */
  sftGradients(rows: readonly TrainRow[]): Record<string, Float32Array> {
    const batch = packBatch(this.config, rows, this.#padId);
    return this.tf.tidy(() => {
      const { grads } = this.tf.variableGrads(
        () => this.#sftLossTensor(batch, this.#vars) as never,
        Object.values(this.#vars),
      );
      const out: Record<string, Float32Array> = {};
      for (const [name, v] of Object.entries(this.#vars)) out[name] = new Float32Array(grads[v.name]!.dataSync());
      return out;
    });
  }

  /** One Adam step of next-token loss on the masked (assistant) tokens. */
  sftStep(rows: readonly TrainRow[]): SftStepResult {
    const t0 = performance.now();
    const batch = packBatch(this.config, rows, this.#padId);
    const { loss, gradNorm } = this.#step(() => this.#sftLossTensor(batch, this.#vars));
    return { loss, gradNorm, tokens: batch.tokens, truncated: batch.truncated, ms: performance.now() - t0 };
  }

  /** Several SFT steps on random minibatches of `examples` (seeded). Returns each step's result. */
  sft(options: { examples: readonly SftExample[]; steps: number; batchSize?: number; seed?: number }): SftStepResult[] {
    const rows = this.sftRows(options.examples);
    const rng = new SeededRng(options.seed ?? 0);
    const bs = Math.min(options.batchSize ?? 8, rows.length);
    const out: SftStepResult[] = [];
    for (let s = 0; s < options.steps; s++) {
      const batch: TrainRow[] = [];
      for (let i = 0; i < bs; i++) batch.push(rows[rng.int(rows.length)]!);
      out.push(this.sftStep(batch));
    }
    return out;
  }

  /** Next-token logits after `ids`, by a full forward pass of the training graph (no cache). */
  nextTokenLogits(ids: readonly number[]): Float32Array {
    return this.tf.tidy(() => {
      const logits = tfForward(this.tf, this.config, this.#vars, [ids.slice()]);
      return new Float32Array(this.tf.slice(logits, [ids.length - 1, 0], [1, this.config.vocabSize]).dataSync());
    });
  }

  /** Log-probabilities of each sample's response tokens under the current weights. */
  responseLogprobs(samples: ReadonlyArray<Pick<PolicySample, 'promptTokenIds' | 'responseTokenIds'>>): number[][] {
    const rows = samples.map((s) => policyRow({ ...s, advantage: 0 }));
    const batch = packBatch(this.config, rows, this.#padId);
    const logp = this.tf.tidy(() => this.#tokenLogp(batch, this.#vars).dataSync());
    const T = batch.inputs[0]!.length;
    return samples.map((s, b) => {
      const start = s.promptTokenIds.length - 1;
      const out: number[] = [];
      for (let i = 0; i < s.responseTokenIds.length && start + i < T; i++) out.push(logp[b * T + start + i]!);
      return out;
    });
  }

  /** One clipped policy-gradient (GRPO/PPO) Adam step with an optional k3 KL to the reference. */
  policyStep(options: PolicyStepOptions): PolicyStepResult {
    const t0 = performance.now();
    const { tf } = this;
    const eps = options.clipEps ?? 0.2;
    const epsHigh = options.clipEpsHigh ?? eps;
    const beta = options.klCoef ?? 0;
    if (beta > 0 && !this.#ref)
      throw new UserError('policyStep: klCoef > 0 needs reference weights; create the trainer with `reference`.');
    if (options.learningRate !== undefined) this.#setLearningRate(options.learningRate);
    const batch = packBatch(this.config, options.samples.map(policyRow), this.#padId);
    const N = batch.targets.length;
    // A trained token without a rollout-time logprob is treated as on-policy (ratio 1): that needs the current
    // logprobs before the step, one extra forward pass. Untrained positions (weight 0) take any finite value.
    let missing = false;
    for (let k = 0; k < N && !missing; k++) missing = batch.mask[k]! > 0 && !Number.isFinite(batch.oldLogprobs[k]!);
    const before = missing ? tf.tidy(() => this.#tokenLogp(batch, this.#vars).dataSync()) : null;
    const old = new Float32Array(N);
    for (let k = 0; k < N; k++)
      old[k] = Number.isFinite(batch.oldLogprobs[k]!) ? batch.oldLogprobs[k]! : (before?.[k] ?? 0);
    const ref = beta > 0 ? tf.tidy(() => this.#tokenLogp(batch, this.#ref!).dataSync()) : undefined;
    const denom = Math.max(1, batch.tokens);
    // Loss weight per target: token-mean over the batch, or the mean of per-sequence token means.
    const lossWeights = new Float32Array(N);
    const T = batch.inputs[0]!.length;
    const B = batch.inputs.length;
    for (let b = 0; b < B; b++) {
      let count = 0;
      for (let t = 0; t < T; t++) count += batch.mask[b * T + t]!;
      for (let t = 0; t < T; t++) {
        const k = b * T + t;
        lossWeights[k] =
          options.lossAggregation === 'sequence-mean'
            ? count > 0
              ? batch.mask[k]! / (count * B)
              : 0
            : batch.mask[k]! / denom;
      }
    }
    let entropy = 0;
    // The metrics below use the logprobs of the step's own forward pass (the weights before the update).
    let current = before ?? new Float32Array(N);
    const { loss, gradNorm } = this.#step(() => {
      const logits = tfForward(tf, this.config, this.#vars, batch.inputs);
      const { logp, logpAll } = tokenLogprobs(tf, logits, batch.targets, this.config.vocabSize);
      if (!before) current = logp.dataSync() as Float32Array;
      const mask = tf.tensor1d(batch.mask);
      const adv = tf.tensor1d(batch.advantages);
      const ratio = tf.exp(tf.sub(logp, tf.tensor1d(old)));
      const clipped = tf.clipByValue(ratio, 1 - eps, 1 + epsHigh);
      let perTok = tf.neg(tf.minimum(tf.mul(ratio, adv), tf.mul(clipped, adv)));
      if (ref) {
        const r = tf.sub(tf.tensor1d(ref), logp);
        perTok = tf.add(perTok, tf.mul(beta, tf.sub(tf.sub(tf.exp(r), r), 1)));
      }
      const ent = tf.neg(tf.sum(tf.mul(tf.exp(logpAll), logpAll), -1));
      entropy = tf.sum(tf.mul(ent, mask)).dataSync()[0]! / denom;
      return tf.sum(tf.mul(perTok, tf.tensor1d(lossWeights)));
    });
    let pg = 0,
      kl = 0,
      approx = 0,
      clipCount = 0,
      ratioSum = 0;
    for (let k = 0; k < N; k++) {
      if (!batch.mask[k]) continue;
      const a = batch.advantages[k]!;
      const ratio = Math.exp(current[k]! - old[k]!);
      const cr = Math.min(Math.max(ratio, 1 - eps), 1 + epsHigh);
      pg += -Math.min(ratio * a, cr * a);
      if ((a > 0 && ratio > 1 + epsHigh) || (a < 0 && ratio < 1 - eps)) clipCount++;
      ratioSum += ratio;
      approx += old[k]! - current[k]!;
      if (ref) {
        const r = ref[k]! - current[k]!;
        kl += Math.exp(r) - r - 1;
      }
    }
    return {
      loss,
      pgLoss: pg / denom,
      kl: kl / denom,
      approxKlOld: approx / denom,
      clipFraction: clipCount / denom,
      ratioMean: ratioSum / denom,
      entropy,
      gradNorm,
      tokens: batch.tokens,
      truncated: batch.truncated,
      ms: performance.now() - t0,
    };
  }

  /** Tinker's `forward_backward`: a summed loss over the datums; gradients add up until {@link optimStep}. */
  forwardBackward(input: ForwardBackwardInput): ForwardBackwardResult {
    return forwardBackward(this.#primitiveContext(), input);
  }

  /** Tinker's `optim_step`: one Adam(W) step with the accumulated gradients (then cleared). */
  optimStep(params: AdamStepParams): Record<string, number> {
    return optimStep(this.#primitiveContext(), params);
  }

  #primitiveContext(): PrimitiveContext {
    return {
      tf: this.tf,
      config: this.config,
      vars: this.#vars,
      padId: this.#padId,
      optimizer: this.#optimizer,
      accum: this.#accum,
    };
  }

  /** Frees the tensors and variables. */
  dispose(): void {
    for (const g of this.#accum.values()) g.dispose();
    this.#accum.clear();
    for (const v of Object.values(this.#vars)) v.dispose();
    this.setReference(undefined);
    this.#optimizer.dispose();
  }

  #tokenLogp(batch: PackedBatch, params: Record<string, Tensor>): Tensor {
    const logits = tfForward(this.tf, this.config, params, batch.inputs);
    return tokenLogprobs(this.tf, logits, batch.targets, this.config.vocabSize).logp;
  }

  #sftLossTensor(batch: PackedBatch, params: Record<string, Tensor>): Tensor {
    const { tf } = this;
    const logp = this.#tokenLogp(batch, params);
    return tf.div(tf.neg(tf.sum(tf.mul(logp, tf.tensor1d(batch.mask)))), Math.max(1, batch.tokens));
  }

  /** tfjs's Adam reads its (TypeScript-protected) `learningRate` field at every step. */
  #setLearningRate(rate: number): void {
    if (!Number.isFinite(rate) || rate < 0)
      throw new UserError(`policyStep: learningRate must be a finite number ≥ 0, got ${String(rate)}.`);
    (this.#optimizer as unknown as { learningRate: number }).learningRate = rate;
  }

  #step(lossFn: () => Tensor): { loss: number; gradNorm: number } {
    const { tf } = this;
    return tf.tidy(() => {
      const vars = Object.values(this.#vars);
      const { value, grads } = tf.variableGrads(lossFn as never, vars);
      let sq = 0;
      for (const g of Object.values(grads)) sq += tf.sum(tf.square(g)).dataSync()[0]!;
      const gradNorm = Math.sqrt(sq);
      const scale = this.#maxGradNorm > 0 && gradNorm > this.#maxGradNorm ? this.#maxGradNorm / (gradNorm + 1e-6) : 1;
      const named = Object.entries(grads).map(([name, g]) => ({ name, tensor: scale === 1 ? g : tf.mul(g, scale) }));
      this.#optimizer.applyGradients(named);
      return { loss: value.dataSync()[0]!, gradNorm };
    });
  }
}

/** Turns a policy sample into a training row (targets = response tokens under the response mask). */
export function policyRow(s: PolicySample): TrainRow {
  const P = s.promptTokenIds.length;
  const R = s.responseTokenIds.length;
  if (P === 0)
    throw new UserError(
      'PolicySample.promptTokenIds is empty; pass the prompt ids the server returned (prompt_token_ids).',
    );
  if (s.responseMask && s.responseMask.length !== R) {
    throw new UserError(
      `PolicySample.responseMask has ${s.responseMask.length} entries for ${R} response tokens; give one per token.`,
    );
  }
  if (s.logprobs && s.logprobs.length !== R) {
    throw new UserError(
      `PolicySample.logprobs has ${s.logprobs.length} entries for ${R} response tokens; give one per token or omit it.`,
    );
  }
  const ids = [...s.promptTokenIds, ...s.responseTokenIds];
  const mask = [...new Array<number>(P).fill(0), ...(s.responseMask ?? new Array<number>(R).fill(1))];
  const advantages = new Array<number>(P + R).fill(s.advantage);
  const oldLogprobs = [
    ...new Array<number>(P).fill(Number.NaN),
    ...(s.logprobs ?? new Array<number>(R).fill(Number.NaN)),
  ];
  return { ids, mask, advantages, oldLogprobs };
}
