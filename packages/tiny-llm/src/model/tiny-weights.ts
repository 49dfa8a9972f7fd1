import { SeededRng } from './rng';
import { paramShapes, validateConfig, type TinyConfig } from './tiny-config';
import type { TokenizerSpec } from '../tokenizer/tiny-tokenizer';

/** A full set of model weights: the shape, the tokenizer and every parameter as float32. */
export interface TinyWeights {
  config: TinyConfig;
  tokenizer: TokenizerSpec;
  /** Parameters by name (see `paramShapes`), row-major float32. */
  params: Record<string, Float32Array>;
}

/** Fresh random weights, deterministic under `seed`. */
export function initWeights(options: { config: TinyConfig; tokenizer: TokenizerSpec; seed?: number }): TinyWeights {
  const { config } = options;
  validateConfig(config);
  const rng = new SeededRng(options.seed ?? 0);
  const params: Record<string, Float32Array> = {};
  const std = 0.02;
  const scaled = std / Math.sqrt(2 * config.nLayers);
  for (const p of paramShapes(config)) {
    const n = p.shape.reduce((a, b) => a * b, 1);
    const arr = new Float32Array(n);
    if (p.init === 'ones') arr.fill(1);
    else {
      const s = p.init === 'scaled-normal' ? scaled : p.name === 'pos_emb' || p.name === 'seg_emb' ? std / 2 : std;
      for (let i = 0; i < n; i++) arr[i] = rng.normal() * s;
    }
    params[p.name] = arr;
  }
  return { config: { ...config }, tokenizer: options.tokenizer, params };
}

/** A deep copy of weights (parameters copied). */
export function cloneWeights(w: TinyWeights): TinyWeights {
  const params: Record<string, Float32Array> = {};
  for (const [k, v] of Object.entries(w.params)) params[k] = v.slice();
  return {
    config: { ...w.config },
    tokenizer: { kind: w.tokenizer.kind, merges: w.tokenizer.merges.map(([a, b]) => [a, b]) },
    params,
  };
}
