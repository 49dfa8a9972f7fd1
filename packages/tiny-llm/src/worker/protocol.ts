import type { FinishReason, GeneratedToken, GenerationParams } from '../model/sequence';
import type { TinyWeights } from '../model/tiny-weights';

/** Messages to the inference worker. */
export type InferenceRequest =
  | { type: 'load'; version: string; weights: TinyWeights }
  | { type: 'unload'; version: string }
  | { type: 'generate'; id: number; version: string; params: GenerationParams; n: number }
  | { type: 'cancel'; id: number }
  /** Logprob of each prompt token after the ones before it (Tinker's `prompt_logprobs`). */
  | { type: 'score'; id: number; version: string; ids: number[] };

/** Messages from the inference worker. */
export type InferenceEvent =
  | { type: 'loaded'; version: string }
  /** The prompt is in the KV cache; `cachedTokens` of its positions came from the prefix cache. */
  | { type: 'prefilled'; id: number; cachedTokens: number }
  | { type: 'tokens'; id: number; index: number; tokens: GeneratedToken[] }
  | { type: 'done'; id: number; index: number; finishReason: FinishReason }
  | { type: 'error'; id: number; message: string }
  /** `logprobs[0]` is null (the first token has no context). */
  | { type: 'scored'; id: number; logprobs: Array<number | null> };
