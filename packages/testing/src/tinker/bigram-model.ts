/**
 * The stand-in's model: a bigram logit table over the base model's vocabulary. `logit(next | prev)` is a trainable
 * parameter for each (prev, next) pair a training datum has targeted, and 0 for every other pair, so a row with `k`
 * trained entries has `log Z = log((V - k) + Σ exp(w))` and nothing costs O(V). Losses, gradients, Adam and sampling
 * are computed for real on this table: a result is never a canned number.
 */

/** Adam's state of one parameter. */
interface AdamSlot {
  m: number;
  v: number;
}

/** A saved copy of the table (and, for training state, the optimizer). */
export interface BigramSnapshot {
  weights: Map<string, number>;
  adam?: { step: number; slots: Map<string, AdamSlot> };
}

/** One position's inputs to a loss. */
export interface LossPosition {
  prev: number;
  target: number;
  weight: number;
  advantage: number;
  samplerLogprob: number;
}

/** The loss of a position given its logprob under the model: the value and d loss / d logprob. */
export type PositionLoss = (logprob: number, position: LossPosition) => { loss: number; dLogprob: number };

/** The loss functions, as Tinker's docs define them, per position. */
export function positionLoss(lossFn: string, config: Record<string, number>): PositionLoss {
  const low = config.clip_low_threshold ?? 0.8;
  const high = config.clip_high_threshold ?? 1.2;
  switch (lossFn) {
    case 'cross_entropy':
      return (lp, p) => ({ loss: -p.weight * lp, dLogprob: -p.weight });
    case 'importance_sampling':
      return (lp, p) => {
        const ratio = Math.exp(lp - p.samplerLogprob);
        return { loss: -ratio * p.advantage, dLogprob: -ratio * p.advantage };
      };
    case 'ppo':
      return (lp, p) => {
        const ratio = Math.exp(lp - p.samplerLogprob);
        const clipped = Math.min(Math.max(ratio, low), high);
        const unclippedTerm = ratio * p.advantage;
        const clippedTerm = clipped * p.advantage;
        if (unclippedTerm <= clippedTerm) return { loss: -unclippedTerm, dLogprob: -unclippedTerm };
        return { loss: -clippedTerm, dLogprob: 0 };
      };
    case 'cispo':
      return (lp, p) => {
        const clipped = Math.min(Math.max(Math.exp(lp - p.samplerLogprob), low), high);
        return { loss: -clipped * p.advantage * lp, dLogprob: -clipped * p.advantage };
      };
    case 'dro':
      return (lp, p) => {
        const beta = config.beta ?? 0.05;
        const d = lp - p.samplerLogprob;
        return { loss: -(p.advantage * lp - 0.5 * beta * d * d), dLogprob: -(p.advantage - beta * d) };
      };
    default:
      throw new Error(`unknown loss_fn "${lossFn}"`);
  }
}

const key = (prev: number, next: number) => `${prev}:${next}`;

/** A trainable bigram table over `vocabSize` token ids. */
export class BigramModel {
  readonly vocabSize: number;
  weights = new Map<string, number>();
  /** Trained next-token ids per previous token (the rows' support). */
  #rows = new Map<number, Set<number>>();
  #grads = new Map<string, number>();
  #adam = { step: 0, slots: new Map<string, AdamSlot>() };

  constructor(vocabSize: number) {
    this.vocabSize = vocabSize;
  }

  #row(prev: number): Set<number> {
    let row = this.#rows.get(prev);
    if (!row) this.#rows.set(prev, (row = new Set()));
    return row;
  }

  #logZ(prev: number): number {
    const row = this.#rows.get(prev);
    let sum = this.vocabSize - (row?.size ?? 0);
    for (const next of row ?? []) sum += Math.exp(this.weights.get(key(prev, next)) ?? 0);
    return Math.log(sum);
  }

  /** log p(next | prev). */
  logprob(prev: number, next: number): number {
    return (this.weights.get(key(prev, next)) ?? 0) - this.#logZ(prev);
  }

  /**
   * Runs a loss over positions: returns per-position logprobs and the summed loss; unless `forwardOnly`, adds the exact
   * gradient of the loss to the accumulated gradients of the trained (prev, next) parameters.
   */
  lossAndGrad(
    positions: LossPosition[],
    loss: PositionLoss,
    forwardOnly: boolean,
  ): { logprobs: number[]; loss: number } {
    const logprobs: number[] = [];
    let total = 0;
    for (const position of positions) {
      // A target trained on becomes a parameter of its row (LoRA-like: only those entries move).
      if (!forwardOnly && (position.weight !== 0 || position.advantage !== 0)) {
        this.#row(position.prev).add(position.target);
      }
      const lp = this.logprob(position.prev, position.target);
      logprobs.push(lp);
      const { loss: value, dLogprob } = loss(lp, position);
      total += value;
      if (forwardOnly || dLogprob === 0) continue;
      const logZ = this.#logZ(position.prev);
      for (const next of this.#rows.get(position.prev) ?? []) {
        const k = key(position.prev, next);
        const p = Math.exp((this.weights.get(k) ?? 0) - logZ);
        const dlp = (next === position.target ? 1 : 0) - p;
        this.#grads.set(k, (this.#grads.get(k) ?? 0) + dLogprob * dlp);
      }
    }
    return { logprobs, loss: total };
  }

  /** One Adam step over the accumulated gradients, then clears them. Returns the gradient norm before clipping. */
  adamStep(params: {
    learning_rate: number;
    beta1: number;
    beta2: number;
    eps: number;
    weight_decay: number;
    grad_clip_norm: number;
  }): { gradNorm: number; updated: number } {
    let norm = 0;
    for (const g of this.#grads.values()) norm += g * g;
    norm = Math.sqrt(norm);
    const scale = params.grad_clip_norm > 0 && norm > params.grad_clip_norm ? params.grad_clip_norm / norm : 1;
    this.#adam.step++;
    const t = this.#adam.step;
    for (const [k, rawGrad] of this.#grads) {
      const g = rawGrad * scale;
      const slot = this.#adam.slots.get(k) ?? { m: 0, v: 0 };
      slot.m = params.beta1 * slot.m + (1 - params.beta1) * g;
      slot.v = params.beta2 * slot.v + (1 - params.beta2) * g * g;
      this.#adam.slots.set(k, slot);
      const mHat = slot.m / (1 - params.beta1 ** t);
      const vHat = slot.v / (1 - params.beta2 ** t);
      const w = this.weights.get(k) ?? 0;
      this.weights.set(k, w - params.learning_rate * (mHat / (Math.sqrt(vHat) + params.eps) + params.weight_decay * w));
    }
    const updated = this.#grads.size;
    this.#grads.clear();
    return { gradNorm: norm, updated };
  }

  /** Draws up to `maxTokens` tokens after `prompt` (stopping at a stop token), with each token's logprob. */
  sample(
    prompt: number[],
    maxTokens: number,
    temperature: number,
    random: () => number,
    stopTokens: readonly number[] = [],
  ): { tokens: number[]; logprobs: number[]; stop: boolean } {
    const tokens: number[] = [];
    const logprobs: number[] = [];
    let prev = prompt[prompt.length - 1] ?? 0;
    for (let i = 0; i < maxTokens; i++) {
      const next = this.#draw(prev, temperature, random);
      tokens.push(next);
      logprobs.push(this.logprob(prev, next));
      if (stopTokens.includes(next)) return { tokens, logprobs, stop: true };
      prev = next;
    }
    return { tokens, logprobs, stop: false };
  }

  #draw(prev: number, temperature: number, random: () => number): number {
    const row = [...(this.#rows.get(prev) ?? [])];
    const t = temperature > 0 ? temperature : 1e-6;
    const scaled = row.map((next) => (this.weights.get(key(prev, next)) ?? 0) / t);
    const untrained = this.vocabSize - row.length;
    const max = Math.max(0, ...scaled);
    const mass = scaled.map((s) => Math.exp(s - max));
    const rest = untrained * Math.exp(-max);
    const total = mass.reduce((a, b) => a + b, rest);
    let u = random() * total;
    for (let i = 0; i < row.length; i++) {
      u -= mass[i]!;
      if (u < 0) return row[i]!;
    }
    // An untrained token, uniformly.
    const trained = new Set(row);
    for (;;) {
      const candidate = Math.floor(random() * this.vocabSize);
      if (!trained.has(candidate)) return candidate;
    }
  }

  /** A copy of the weights (and optimizer state when `withOptimizer`). */
  snapshot(withOptimizer: boolean): BigramSnapshot {
    const snap: BigramSnapshot = { weights: new Map(this.weights) };
    if (withOptimizer) {
      snap.adam = {
        step: this.#adam.step,
        slots: new Map([...this.#adam.slots].map(([k, s]) => [k, { ...s }])),
      };
    }
    return snap;
  }

  /** Replaces the weights (and optimizer state when the snapshot has it and `withOptimizer`). */
  restore(snapshot: BigramSnapshot, withOptimizer: boolean): void {
    this.weights = new Map(snapshot.weights);
    this.#rows = new Map();
    for (const k of this.weights.keys()) {
      const [prev, next] = k.split(':').map(Number) as [number, number];
      this.#row(prev).add(next);
    }
    this.#grads.clear();
    if (withOptimizer && snapshot.adam) {
      this.#adam = {
        step: snapshot.adam.step,
        slots: new Map([...snapshot.adam.slots].map(([k, s]) => [k, { ...s }])),
      };
    } else if (withOptimizer) {
      this.#adam = { step: 0, slots: new Map() };
    }
  }

  /** A model sharing nothing with this one, loaded from a snapshot. */
  static fromSnapshot(vocabSize: number, snapshot: BigramSnapshot): BigramModel {
    const model = new BigramModel(vocabSize);
    model.restore(snapshot, true);
    return model;
  }
}
