import { UserError } from '@agl/core/errors';

/** The shape of a tiny transformer. */
export interface TinyConfig {
  /** Vocabulary size (the tokenizer's). */
  vocabSize: number;
  /** Width of the residual stream. */
  dModel: number;
  /** Number of transformer blocks. */
  nLayers: number;
  /** Attention heads; must divide `dModel`. */
  nHeads: number;
  /** Hidden width of the MLP. */
  dFF: number;
  /** Longest sequence (prompt + completion) in tokens; the size of the learned position table. */
  maxSeqLen: number;
  /**
   * Token shift: add a learned embedding of the previous token to each position's input (`prev_emb`). It hands every
   * position its predecessor for free, which is what the "find the earlier occurrence, copy what followed" circuit
   * needs, so a tiny model learns to copy numbers (tool results, arguments) in far fewer steps. Default false.
   */
  prevTokenEmbedding?: boolean;
  /**
   * A second token shift: add a learned embedding of the token two back (`prev2_emb`). With it a position knows the
   * pair of tokens before it, so "find where this pair occurred, copy what followed" tells apart the repeated digits of
   * a long number that the one-token shift confuses (`69596400`: after `6959` the single `9` occurs twice). Default
   * false.
   */
  prev2TokenEmbedding?: boolean;
  /**
   * Segment positions: add a learned embedding of the position inside the current segment, counted from the last
   * special token (`<|user|>`, `<|call|>`, `<|tool|>`, `<|assistant|>`, …; `seg_emb`, one row per position up to
   * `maxSeqLen`). The k-th token of a tool result and the k-th token of an answer copying it then share a
   * segment position wherever the segments sit, so a copy does not depend on how long the text before it was (with
   * absolute positions alone, a tiny model copies by offset and fails on rarer layouts, such as a 3-digit operand).
   * Default false.
   */
  segmentPositions?: boolean;
}

/** Defaults: about 0.25 M parameters with the byte tokenizer. */
export const DEFAULT_TINY_CONFIG: Omit<TinyConfig, 'vocabSize'> = {
  dModel: 64,
  nLayers: 4,
  nHeads: 4,
  dFF: 256,
  maxSeqLen: 512,
};

/** One named parameter tensor. */
export interface ParamShape {
  name: string;
  shape: number[];
  /** How the parameter is initialised. */
  init: 'normal' | 'ones' | 'scaled-normal';
}

/** The parameter list of a config, in a stable order. Embeddings are tied with the output head. */
export function paramShapes(c: TinyConfig): ParamShape[] {
  const out: ParamShape[] = [
    { name: 'tok_emb', shape: [c.vocabSize, c.dModel], init: 'normal' },
    { name: 'pos_emb', shape: [c.maxSeqLen, c.dModel], init: 'normal' },
  ];
  if (c.prevTokenEmbedding) out.push({ name: 'prev_emb', shape: [c.vocabSize, c.dModel], init: 'normal' });
  if (c.prev2TokenEmbedding) out.push({ name: 'prev2_emb', shape: [c.vocabSize, c.dModel], init: 'normal' });
  if (c.segmentPositions) out.push({ name: 'seg_emb', shape: [c.maxSeqLen, c.dModel], init: 'normal' });
  for (let l = 0; l < c.nLayers; l++) {
    out.push(
      { name: `l${l}.norm1`, shape: [c.dModel], init: 'ones' },
      { name: `l${l}.wqkv`, shape: [c.dModel, 3 * c.dModel], init: 'normal' },
      { name: `l${l}.wo`, shape: [c.dModel, c.dModel], init: 'scaled-normal' },
      { name: `l${l}.norm2`, shape: [c.dModel], init: 'ones' },
      { name: `l${l}.w1`, shape: [c.dModel, c.dFF], init: 'normal' },
      { name: `l${l}.w2`, shape: [c.dFF, c.dModel], init: 'scaled-normal' },
    );
  }
  out.push({ name: 'norm_f', shape: [c.dModel], init: 'ones' });
  return out;
}

/** Total number of parameters. */
export function countParams(c: TinyConfig): number {
  return paramShapes(c).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
}

/** Throws a UserError naming the bad field when a config is unusable. */
export function validateConfig(c: TinyConfig): void {
  for (const key of ['vocabSize', 'dModel', 'nLayers', 'nHeads', 'dFF', 'maxSeqLen'] as const) {
    if (!Number.isInteger(c[key]) || c[key] <= 0) {
      throw new UserError(`TinyConfig.${key} must be a positive integer, got ${String(c[key])}.`);
    }
  }
  for (const key of ['prevTokenEmbedding', 'prev2TokenEmbedding', 'segmentPositions'] as const) {
    if (c[key] !== undefined && typeof c[key] !== 'boolean')
      throw new UserError(`TinyConfig.${key} must be true or false, got ${JSON.stringify(c[key])}.`);
  }
  if (c.dModel % c.nHeads !== 0) {
    throw new UserError(
      `TinyConfig.dModel (${c.dModel}) must be divisible by nHeads (${c.nHeads}); pick nHeads that divides it.`,
    );
  }
}
