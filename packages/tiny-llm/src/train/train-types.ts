import type { WireChatMessage, WireTool } from '../chat/chat-types';

/** A supervised example: a conversation whose assistant turns are the targets. */
export interface SftExample {
  messages: WireChatMessage[];
  tools?: WireTool[];
}

/** A policy-gradient sample (Contract 3's training sample). */
export interface PolicySample {
  promptTokenIds: number[];
  responseTokenIds: number[];
  /** 1 for response tokens to train (tool observations merged into a trajectory get 0). Default all 1. */
  responseMask?: number[];
  /** Behaviour-policy logprobs of the response tokens, as the server returned them. Default: recomputed (on-policy). */
  logprobs?: number[];
  /** The sample's advantage (GRPO: group-normalised reward). */
  advantage: number;
  /** Group id (task id); informational. */
  groupId?: string;
}

/** Optimiser settings. */
export interface OptimizerOptions {
  /** Adam learning rate. Default 1e-3. */
  learningRate?: number;
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  /** Global gradient-norm clip; 0 turns it off. Default 1. */
  maxGradNorm?: number;
}

/** Options of one policy-gradient step. */
export interface PolicyStepOptions {
  samples: PolicySample[];
  /** PPO clip range: the ratio is clipped to [1 - clipEps, 1 + clipEpsHigh]. Default 0.2. */
  clipEps?: number;
  /** Upper clip (DAPO's clip-higher). Default = clipEps. */
  clipEpsHigh?: number;
  /** Weight of the k3 KL estimate to the reference weights. Default 0 (no reference pass). */
  klCoef?: number;
  /**
   * How token losses combine: `token-mean` (default; every trained token of the batch weighs the same) or
   * `sequence-mean` (each sample's token mean, then the mean over samples, as in the original GRPO).
   */
  lossAggregation?: 'token-mean' | 'sequence-mean';
  /** Adam learning rate from this step on (a schedule sets it per step). Default: the optimizer's current rate. */
  learningRate?: number;
}

/** Metrics of one SFT step. */
export interface SftStepResult {
  loss: number;
  tokens: number;
  gradNorm: number;
  truncated: number;
  ms: number;
}

/** Teacher-forced accuracy of SFT rows (see `TrainerCore.sftAccuracy`). */
export interface SftAccuracy {
  /** Share of masked targets that are their position's argmax. */
  tokenAccuracy: number;
  /** Share of rows whose every masked target is the argmax: what greedy decoding would reproduce exactly. */
  exactMatch: number;
  /** Masked targets and rows scored. */
  tokens: number;
  rows: number;
}

/** Metrics of one policy-gradient step (means over trained tokens, before the update; `loss` uses the aggregation). */
export interface PolicyStepResult {
  loss: number;
  pgLoss: number;
  /** k3 estimate of KL(policy ‖ reference); 0 without a reference. */
  kl: number;
  /** mean(old − new) logprob: how far the policy moved from the behaviour policy. */
  approxKlOld: number;
  clipFraction: number;
  ratioMean: number;
  entropy: number;
  gradNorm: number;
  tokens: number;
  truncated: number;
  ms: number;
}
