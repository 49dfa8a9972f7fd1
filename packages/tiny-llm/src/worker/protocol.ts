import type { FinishReason, GeneratedToken, GenerationParams } from '../model/sequence';
import type { TinyWeights } from '../model/tiny-weights';

/** Messages to the inference worker. */
export type InferenceRequest =
  | { type: 'load'; version: string; weights: TinyWeights }
  | { type: 'unload'; version: string }
  | { type: 'generate'; id: number; version: string; params: GenerationParams; n: number }
  | { type: 'cancel'; id: number };

/** Messages from the inference worker. */
export type InferenceEvent =
  | { type: 'loaded'; version: string }
  /** The prompt is in the KV cache; `cachedTokens` of its positions came from the prefix cache. */
  | { type: 'prefilled'; id: number; cachedTokens: number }
  | { type: 'tokens'; id: number; index: number; tokens: GeneratedToken[] }
  | { type: 'done'; id: number; index: number; finishReason: FinishReason }
  | { type: 'error'; id: number; message: string };
