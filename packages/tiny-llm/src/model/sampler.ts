import type { SeededRng } from './rng';

/** log-softmax of logits (float64 accumulation). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i]! - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i]! - lse;
  return out;
}

/** Sampling settings for one sequence. */
export interface SamplingOptions {
  /** 0 means greedy (argmax). */
  temperature: number;
  /** Nucleus mass in (0, 1]. */
  topP: number;
  /** Token ids that may not be chosen. */
  banned?: ReadonlySet<number>;
}

/** Picks the next token from log-probabilities. Greedy ties go to the smallest id. */
export function sampleToken(logp: Float64Array, options: SamplingOptions, rng: SeededRng): number {
  const banned = options.banned;
  if (options.temperature <= 0) {
    let best = -1;
    for (let i = 0; i < logp.length; i++) if (!banned?.has(i) && (best < 0 || logp[i]! > logp[best]!)) best = i;
    return best;
  }
  const inv = 1 / options.temperature;
  let max = -Infinity;
  for (let i = 0; i < logp.length; i++) if (!banned?.has(i) && logp[i]! * inv > max) max = logp[i]! * inv;
  const probs = new Float64Array(logp.length);
  let total = 0;
  for (let i = 0; i < logp.length; i++) {
    if (banned?.has(i)) continue;
    probs[i] = Math.exp(logp[i]! * inv - max);
    total += probs[i]!;
  }
  let order: number[] | undefined;
  if (options.topP < 1) {
    const sorted = Array.from(probs.keys()).sort((a, b) => probs[b]! - probs[a]! || a - b);
    order = [];
    let mass = 0;
    for (const i of sorted) {
      order.push(i);
      mass += probs[i]! / total;
      if (mass >= options.topP) break;
    }
    total = order.reduce((acc, i) => acc + probs[i]!, 0);
  }
  let r = rng.next() * total;
  if (order) {
    for (const i of order) {
      r -= probs[i]!;
      if (r <= 0) return i;
    }
    return order.at(-1)!;
  }
  let last = -1;
  for (let i = 0; i < probs.length; i++) {
    if (probs[i] === 0) continue;
    last = i;
    r -= probs[i]!;
    if (r <= 0) return i;
  }
  return last;
}

/** The `k` most likely tokens, most likely first (ties: smaller id first). */
export function topK(logp: Float64Array, k: number): Array<[number, number]> {
  if (k <= 0) return [];
  const idx = Array.from(logp.keys()).sort((a, b) => logp[b]! - logp[a]! || a - b);
  return idx.slice(0, k).map((i) => [i, logp[i]!]);
}
