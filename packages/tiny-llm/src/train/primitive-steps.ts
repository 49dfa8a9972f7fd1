import type { Tensor, Variable } from '@tensorflow/tfjs';
import { UserError } from '@agl/core/errors';
import type { TinyConfig } from '../model/tiny-config';
import type { Tf } from './tf-backend';
import { tfForward, tokenLogprobs } from './tf-forward';

/** The loss functions the embedded policy computes (Tinker's names). */
export const PRIMITIVE_LOSSES = ['cross_entropy', 'importance_sampling', 'ppo'] as const;
/** One of {@link PRIMITIVE_LOSSES}. */
export type PrimitiveLoss = (typeof PRIMITIVE_LOSSES)[number];

/**
 * A Tinker-style datum: `tokens` is the model input (prompt + completion[:-1]); every per-token input has one value per
 * input token, and position `i` predicts `targetTokens[i]`.
 */
export interface PrimitiveDatum {
  tokens: number[];
  targetTokens: number[];
  /** `cross_entropy`: the weight of each position (0 on prompt tokens). */
  weights?: number[];
  /** `importance_sampling` / `ppo`: the sampling logprob of each target. */
  logprobs?: number[];
  /** `importance_sampling` / `ppo`: the advantage of each target (0 on prompt tokens). */
  advantages?: number[];
}

/** Input of `forwardBackward`. */
export interface ForwardBackwardInput {
  datums: PrimitiveDatum[];
  lossFn: PrimitiveLoss;
  /** `ppo`: `clip_low_threshold` (default 0.8) and `clip_high_threshold` (default 1.2), as ratios. */
  lossFnConfig?: Record<string, number>;
  /** Compute the loss and logprobs only; no gradient is accumulated. */
  forwardOnly?: boolean;
}

/** Output of `forwardBackward`: per datum, the target logprobs and each position's loss; `loss:sum` as Tinker names it. */
export interface ForwardBackwardResult {
  outputs: Array<{ logprobs: number[]; elementwiseLoss: number[] }>;
  metrics: Record<string, number>;
}

/** Adam settings of one `optimStep` (Tinker's `AdamParams`). */
export interface AdamStepParams {
  learningRate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Global gradient-norm clip; 0 = none. */
  gradClipNorm: number;
}

/** What the primitive steps reach inside a `TrainerCore`. */
export interface PrimitiveContext {
  tf: Tf;
  config: TinyConfig;
  vars: Record<string, Variable>;
  padId: number;
  optimizer: unknown;
  /** Gradients accumulated since the last optim step, by variable name. */
  accum: Map<string, Tensor>;
}

/**
 * Tinker's `forward_backward`: the loss is a **sum** over positions (as Tinker computes it: the caller normalises through
 * the weights or advantages), gradients add up across calls until {@link optimStep}.
 */
export function forwardBackward(ctx: PrimitiveContext, input: ForwardBackwardInput): ForwardBackwardResult {
  const { tf, config } = ctx;
  const B = input.datums.length;
  if (B === 0) throw new UserError('forward_backward: data is empty; send at least one datum.');
  const T = Math.max(...input.datums.map((d) => d.tokens.length));
  const coef = new Float32Array(B * T); // cross_entropy: weights; policy losses: advantages
  const old = new Float32Array(B * T);
  const targets = new Array<number>(B * T).fill(ctx.padId);
  const inputs: number[][] = [];
  input.datums.forEach((d, b) => {
    const n = d.tokens.length;
    if (n === 0) throw new UserError(`forward_backward: data[${b}].model_input has no tokens.`);
    if (n > config.maxSeqLen)
      throw new UserError(
        `forward_backward: data[${b}] has ${n} tokens; this model's context is ${config.maxSeqLen}. Send shorter datums.`,
      );
    const need = (key: string, v: number[] | undefined): number[] => {
      if (!v) throw new UserError(`forward_backward: data[${b}].loss_fn_inputs.${key} is required by ${input.lossFn}.`);
      if (v.length !== n)
        throw new UserError(
          `forward_backward: data[${b}].loss_fn_inputs.${key} has ${v.length} values for ${n} input tokens; give one per token.`,
        );
      return v;
    };
    const tt = need('target_tokens', d.targetTokens);
    const c = input.lossFn === 'cross_entropy' ? need('weights', d.weights) : need('advantages', d.advantages);
    const lp = input.lossFn === 'cross_entropy' ? undefined : need('logprobs', d.logprobs);
    for (let t = 0; t < n; t++) {
      const id = tt[t]!;
      if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize)
        throw new UserError(
          `forward_backward: data[${b}].loss_fn_inputs.target_tokens[${t}] = ${id} is outside the vocabulary (0..${config.vocabSize - 1}).`,
        );
      targets[b * T + t] = id;
      coef[b * T + t] = c[t]!;
      old[b * T + t] = lp ? lp[t]! : 0;
    }
    for (const id of d.tokens)
      if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize)
        throw new UserError(
          `forward_backward: data[${b}].model_input has token id ${id}, outside the vocabulary (0..${config.vocabSize - 1}).`,
        );
    inputs.push([...d.tokens, ...new Array<number>(T - n).fill(ctx.padId)]);
  });
  const low = input.lossFnConfig?.clip_low_threshold ?? 0.8;
  const high = input.lossFnConfig?.clip_high_threshold ?? 1.2;
  let logpOut: Float32Array = new Float32Array(B * T);
  let perTokOut: Float32Array = new Float32Array(B * T);
  const lossFn = (): Tensor => {
    const logits = tfForward(tf, config, ctx.vars, inputs);
    const { logp } = tokenLogprobs(tf, logits, targets, config.vocabSize);
    const c = tf.tensor1d(coef);
    let perTok: Tensor;
    if (input.lossFn === 'cross_entropy') perTok = tf.neg(tf.mul(logp, c));
    else {
      const ratio = tf.exp(tf.sub(logp, tf.tensor1d(old)));
      perTok =
        input.lossFn === 'importance_sampling'
          ? tf.neg(tf.mul(ratio, c))
          : tf.neg(tf.minimum(tf.mul(ratio, c), tf.mul(tf.clipByValue(ratio, low, high), c)));
    }
    logpOut = logp.dataSync() as Float32Array;
    perTokOut = perTok.dataSync() as Float32Array;
    return tf.sum(perTok);
  };
  let loss: number;
  if (input.forwardOnly) loss = tf.tidy(() => lossFn().dataSync()[0]!);
  else
    loss = tf.tidy(() => {
      const { value, grads } = tf.variableGrads(lossFn as never, Object.values(ctx.vars));
      for (const [name, g] of Object.entries(grads)) {
        const prev = ctx.accum.get(name);
        const next = prev ? tf.add(prev, g) : g;
        tf.keep(next);
        if (prev) prev.dispose();
        ctx.accum.set(name, next);
      }
      return value.dataSync()[0]!;
    });
  const outputs = input.datums.map((d, b) => ({
    logprobs: Array.from(logpOut.subarray(b * T, b * T + d.tokens.length)),
    elementwiseLoss: Array.from(perTokOut.subarray(b * T, b * T + d.tokens.length)),
  }));
  return { outputs, metrics: { 'loss:sum': loss } };
}

/** Tinker's `optim_step`: one Adam(W) step with the gradients accumulated since the last one, then clears them. */
export function optimStep(ctx: PrimitiveContext, p: AdamStepParams): Record<string, number> {
  const { tf } = ctx;
  for (const [k, v] of Object.entries(p))
    if (!Number.isFinite(v) || v < 0)
      throw new UserError(`optim_step: adam_params.${snake(k)} must be a finite number ≥ 0, got ${String(v)}.`);
  if (ctx.accum.size === 0) return { grad_norm: 0, learning_rate: p.learningRate, skipped: 1 };
  // tfjs's Adam reads these (TypeScript-protected) fields at every step.
  Object.assign(ctx.optimizer as object, {
    learningRate: p.learningRate,
    beta1: p.beta1,
    beta2: p.beta2,
    epsilon: p.eps,
  });
  const gradNorm = tf.tidy(() => {
    let sq = 0;
    for (const g of ctx.accum.values()) sq += tf.sum(tf.square(g)).dataSync()[0]!;
    const norm = Math.sqrt(sq);
    const scale = p.gradClipNorm > 0 && norm > p.gradClipNorm ? p.gradClipNorm / (norm + 1e-6) : 1;
    const named = [...ctx.accum.entries()].map(([name, g]) => ({ name, tensor: scale === 1 ? g : tf.mul(g, scale) }));
    (ctx.optimizer as { applyGradients(v: Array<{ name: string; tensor: Tensor }>): void }).applyGradients(named);
    if (p.weightDecay > 0)
      for (const v of Object.values(ctx.vars)) v.assign(tf.mul(v, 1 - p.learningRate * p.weightDecay));
    return norm;
  });
  for (const g of ctx.accum.values()) g.dispose();
  ctx.accum.clear();
  return { grad_norm: gradNorm, learning_rate: p.learningRate };
}

function snake(k: string): string {
  return k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
