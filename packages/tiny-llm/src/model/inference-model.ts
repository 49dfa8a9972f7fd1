import { UserError } from '@agl/core/errors';
import type { TinyConfig } from './tiny-config';
import { nextSegmentPosition } from '../tokenizer/tiny-tokenizer';
import type { TinyWeights } from './tiny-weights';

/** The key/value cache of one sequence: every layer's keys and values for the positions seen so far. */
export class KvCache {
  readonly keys: Float32Array[];
  readonly values: Float32Array[];
  /** Number of positions stored. */
  length = 0;
  /** The last token appended (-1 when empty), for the token-shift embedding. */
  lastToken = -1;
  /** The token before it (-1 when none), for the two-back token shift. */
  lastToken2 = -1;
  /** The segment position of the last token (-1 when empty), for the segment-position embedding. */
  segPos = -1;

  constructor(config: TinyConfig) {
    const size = config.maxSeqLen * config.dModel;
    this.keys = Array.from({ length: config.nLayers }, () => new Float32Array(size));
    this.values = Array.from({ length: config.nLayers }, () => new Float32Array(size));
  }

  /** A copy (for sampling several continuations of one prompt). */
  clone(config: TinyConfig): KvCache {
    const c = new KvCache(config);
    const used = this.length * config.dModel;
    for (let l = 0; l < this.keys.length; l++) {
      c.keys[l]!.set(this.keys[l]!.subarray(0, used));
      c.values[l]!.set(this.values[l]!.subarray(0, used));
    }
    c.length = this.length;
    c.lastToken = this.lastToken;
    c.lastToken2 = this.lastToken2;
    c.segPos = this.segPos;
    return c;
  }
}

/** One row of a batched forward: a token appended to a sequence's cache. */
export interface ForwardRow {
  cache: KvCache;
  token: number;
  /** Compute next-token logits for this row. */
  wantLogits: boolean;
}

interface LayerParams {
  norm1: Float32Array;
  wqkv: Float32Array;
  wo: Float32Array;
  norm2: Float32Array;
  w1: Float32Array;
  w2: Float32Array;
}

/** Adds row `token` of an embedding (a token shift's, or the segment positions') to `x[at..at+d)`; nothing when it is off or there is no such row. */
function addEmbeddingRow(x: Float32Array, at: number, d: number, emb: Float32Array | null, token: number): void {
  if (!emb || token < 0) return;
  const u = token * d;
  for (let j = 0; j < d; j++) x[at + j]! += emb[u + j]!;
}

/**
 * The generation engine: the same transformer as the tfjs training graph, in plain float32 loops with a KV cache.
 * At this size a decode step is a few hundred thousand multiply-adds, so plain loops beat per-op dispatch. Rows from
 * several sequences run through one batched forward (each weight matrix is walked once per step for the whole batch).
 */
export class InferenceModel {
  readonly config: TinyConfig;
  readonly #tokEmb: Float32Array;
  readonly #posEmb: Float32Array;
  readonly #prevEmb: Float32Array | null;
  readonly #prev2Emb: Float32Array | null;
  readonly #segEmb: Float32Array | null;
  readonly #normF: Float32Array;
  readonly #layers: LayerParams[];

  constructor(weights: TinyWeights) {
    this.config = weights.config;
    const p = (name: string): Float32Array => {
      const v = weights.params[name];
      if (!v)
        throw new UserError(
          `Weights lack parameter "${name}"; they do not match config ${JSON.stringify(weights.config)}.`,
        );
      return v;
    };
    this.#tokEmb = p('tok_emb');
    this.#posEmb = p('pos_emb');
    this.#prevEmb = this.config.prevTokenEmbedding ? p('prev_emb') : null;
    this.#prev2Emb = this.config.prev2TokenEmbedding ? p('prev2_emb') : null;
    this.#segEmb = this.config.segmentPositions ? p('seg_emb') : null;
    this.#normF = p('norm_f');
    this.#layers = Array.from({ length: this.config.nLayers }, (_, l) => ({
      norm1: p(`l${l}.norm1`),
      wqkv: p(`l${l}.wqkv`),
      wo: p(`l${l}.wo`),
      norm2: p(`l${l}.norm2`),
      w1: p(`l${l}.w1`),
      w2: p(`l${l}.w2`),
    }));
  }

  /** A fresh, empty cache. */
  newCache(): KvCache {
    return new KvCache(this.config);
  }

  /** Appends `tokens` to `cache` and returns the logits after the last one. */
  prefill(cache: KvCache, tokens: readonly number[]): Float32Array {
    if (tokens.length === 0) throw new UserError('prefill needs at least one token; the prompt is empty.');
    const rows = tokens.map((token, i) => ({ cache, token, wantLogits: i === tokens.length - 1 }));
    return this.forward(rows).at(-1)!;
  }

  /**
   * Runs rows through the model. Rows of the same cache must be in order; each row attends to its cache's earlier
   * positions and to earlier rows of the same cache. Returns logits for the rows that asked for them, in row order.
   */
  forward(rows: readonly ForwardRow[]): Float32Array[] {
    const { dModel: d, nHeads, dFF, maxSeqLen, vocabSize } = this.config;
    const n = rows.length;
    const hd = d / nHeads;
    const pos = new Int32Array(n);
    const prevTok = new Int32Array(n);
    const prev2Tok = new Int32Array(n);
    const segPos = new Int32Array(n);
    /** The segment position of each cache's last token, this batch's rows included. */
    const lastSeg = new Map<KvCache, number>();
    const next = new Map<KvCache, number>();
    /** The last two tokens of each cache, this batch's rows included: [last, the one before]. */
    const last = new Map<KvCache, [number, number]>();
    rows.forEach((r, i) => {
      const p = next.get(r.cache) ?? r.cache.length;
      if (p >= maxSeqLen) {
        throw new UserError(
          `Sequence reached the model's context length (${maxSeqLen} tokens); shorten the prompt or max_tokens.`,
        );
      }
      if (r.token < 0 || r.token >= vocabSize || !Number.isInteger(r.token)) {
        throw new UserError(`Token id ${r.token} is outside the vocabulary (size ${vocabSize}).`);
      }
      pos[i] = p;
      const [t1, t2] = last.get(r.cache) ?? [r.cache.lastToken, r.cache.lastToken2];
      prevTok[i] = t1;
      prev2Tok[i] = t2;
      next.set(r.cache, p + 1);
      last.set(r.cache, [r.token, t1]);
      segPos[i] = nextSegmentPosition(lastSeg.get(r.cache) ?? r.cache.segPos, r.token);
      lastSeg.set(r.cache, segPos[i]!);
    });
    const x = new Float32Array(n * d);
    for (let i = 0; i < n; i++) {
      const t = rows[i]!.token * d;
      const q = pos[i]! * d;
      for (let j = 0; j < d; j++) x[i * d + j] = this.#tokEmb[t + j]! + this.#posEmb[q + j]!;
      addEmbeddingRow(x, i * d, d, this.#prevEmb, prevTok[i]!);
      addEmbeddingRow(x, i * d, d, this.#prev2Emb, prev2Tok[i]!);
      addEmbeddingRow(x, i * d, d, this.#segEmb, segPos[i]!);
    }
    const h = new Float32Array(n * d);
    const qkv = new Float32Array(n * 3 * d);
    const att = new Float32Array(n * d);
    const proj = new Float32Array(n * d);
    const ff = new Float32Array(n * dFF);
    const scores = new Float32Array(maxSeqLen);
    const scale = 1 / Math.sqrt(hd);
    for (let l = 0; l < this.#layers.length; l++) {
      const L = this.#layers[l]!;
      rmsNorm(x, L.norm1, h, n, d);
      matMul(h, L.wqkv, qkv, n, d, 3 * d);
      for (let i = 0; i < n; i++) {
        const cache = rows[i]!.cache;
        const off = pos[i]! * d;
        cache.keys[l]!.set(qkv.subarray(i * 3 * d + d, i * 3 * d + 2 * d), off);
        cache.values[l]!.set(qkv.subarray(i * 3 * d + 2 * d, i * 3 * d + 3 * d), off);
      }
      for (let i = 0; i < n; i++) {
        const K = rows[i]!.cache.keys[l]!;
        const V = rows[i]!.cache.values[l]!;
        const upto = pos[i]!;
        for (let hh = 0; hh < nHeads; hh++) {
          const qo = i * 3 * d + hh * hd;
          let max = -Infinity;
          for (let t = 0; t <= upto; t++) {
            let s = 0;
            const ko = t * d + hh * hd;
            for (let j = 0; j < hd; j++) s += qkv[qo + j]! * K[ko + j]!;
            s *= scale;
            scores[t] = s;
            if (s > max) max = s;
          }
          let sum = 0;
          for (let t = 0; t <= upto; t++) {
            const e = Math.exp(scores[t]! - max);
            scores[t] = e;
            sum += e;
          }
          const ao = i * d + hh * hd;
          for (let j = 0; j < hd; j++) att[ao + j] = 0;
          for (let t = 0; t <= upto; t++) {
            const w = scores[t]! / sum;
            const vo = t * d + hh * hd;
            for (let j = 0; j < hd; j++) att[ao + j] = att[ao + j]! + w * V[vo + j]!;
          }
        }
      }
      matMul(att, L.wo, proj, n, d, d);
      for (let k = 0; k < n * d; k++) x[k] = x[k]! + proj[k]!;
      rmsNorm(x, L.norm2, h, n, d);
      matMul(h, L.w1, ff, n, d, dFF);
      for (let k = 0; k < n * dFF; k++) {
        const z = ff[k]!;
        ff[k] = z / (1 + Math.exp(-z));
      }
      matMul(ff, L.w2, proj, n, dFF, d);
      for (let k = 0; k < n * d; k++) x[k] = x[k]! + proj[k]!;
    }
    for (const [cache, p] of next) cache.length = p;
    for (const [cache, [t1, t2]] of last) {
      cache.lastToken = t1;
      cache.lastToken2 = t2;
    }
    for (const [cache, sp] of lastSeg) cache.segPos = sp;
    rmsNorm(x, this.#normF, h, n, d);
    const out: Float32Array[] = [];
    for (let i = 0; i < n; i++) {
      if (!rows[i]!.wantLogits) continue;
      const logits = new Float32Array(vocabSize);
      const ho = i * d;
      for (let v = 0; v < vocabSize; v++) {
        let s = 0;
        const eo = v * d;
        for (let j = 0; j < d; j++) s += h[ho + j]! * this.#tokEmb[eo + j]!;
        logits[v] = s;
      }
      out.push(logits);
    }
    return out;
  }
}

function rmsNorm(x: Float32Array, g: Float32Array, out: Float32Array, n: number, d: number): void {
  for (let i = 0; i < n; i++) {
    let ss = 0;
    for (let j = 0; j < d; j++) ss += x[i * d + j]! * x[i * d + j]!;
    const r = 1 / Math.sqrt(ss / d + 1e-5);
    for (let j = 0; j < d; j++) out[i * d + j] = x[i * d + j]! * r * g[j]!;
  }
}

/** out[n,m] = a[n,k] · w[k,m] */
function matMul(a: Float32Array, w: Float32Array, out: Float32Array, n: number, k: number, m: number): void {
  out.fill(0, 0, n * m);
  for (let i = 0; i < n; i++) {
    const oo = i * m;
    for (let kk = 0; kk < k; kk++) {
      const av = a[i * k + kk]!;
      if (av === 0) continue;
      const wo = kk * m;
      for (let j = 0; j < m; j++) out[oo + j] = out[oo + j]! + av * w[wo + j]!;
    }
  }
}
