import { UserError } from '@agl/core/errors';
import type { TinyConfig } from '../model/tiny-config';

/** One training row: a token sequence and, per target position, the values the losses need. */
export interface TrainRow {
  ids: number[];
  /** 1 where `ids[i]` is a trained target (predicted from `ids[< i]`), else 0. Same length as `ids`. */
  mask: number[];
  /** Per-token advantage (policy gradient), same length as `ids`; ignored for SFT. */
  advantages?: number[];
  /** Per-token behaviour logprobs (policy gradient), same length as `ids`; NaN where unknown. */
  oldLogprobs?: number[];
}

/** A padded batch: inputs [B, T], flat targets and per-target arrays [B*T]. */
export interface PackedBatch {
  inputs: number[][];
  targets: number[];
  mask: Float32Array;
  advantages: Float32Array;
  oldLogprobs: Float32Array;
  /** Number of trained target tokens. */
  tokens: number;
  /** Rows cut to the context length. */
  truncated: number;
}

/** Packs rows into one right-padded batch, cutting rows longer than the context. */
export function packBatch(config: TinyConfig, rows: readonly TrainRow[], padId: number): PackedBatch {
  if (rows.length === 0) throw new UserError('A training batch needs at least one row; got an empty batch.');
  let truncated = 0;
  const cut = rows.map((r, i) => {
    if (r.ids.length < 2)
      throw new UserError(
        `Training row ${i} has ${r.ids.length} token(s); it needs at least 2 (an input and a target).`,
      );
    if (r.mask.length !== r.ids.length)
      throw new UserError(
        `Training row ${i}: mask has ${r.mask.length} entries for ${r.ids.length} ids; give one per id.`,
      );
    const n = Math.min(r.ids.length, config.maxSeqLen + 1);
    if (n < r.ids.length) truncated++;
    return { r, n };
  });
  const T = Math.max(...cut.map((c) => c.n - 1));
  const B = rows.length;
  const inputs: number[][] = [];
  const targets = new Array<number>(B * T).fill(padId);
  const mask = new Float32Array(B * T);
  const advantages = new Float32Array(B * T);
  const oldLogprobs = new Float32Array(B * T).fill(Number.NaN);
  let tokens = 0;
  cut.forEach(({ r, n }, b) => {
    const row = r.ids.slice(0, n - 1);
    while (row.length < T) row.push(padId);
    inputs.push(row);
    for (let t = 0; t < n - 1; t++) {
      const k = b * T + t;
      targets[k] = r.ids[t + 1]!;
      mask[k] = r.mask[t + 1]! ? 1 : 0;
      tokens += mask[k]!;
      advantages[k] = r.advantages?.[t + 1] ?? 0;
      oldLogprobs[k] = r.oldLogprobs?.[t + 1] ?? Number.NaN;
    }
  });
  return { inputs, targets, mask, advantages, oldLogprobs, tokens, truncated };
}
