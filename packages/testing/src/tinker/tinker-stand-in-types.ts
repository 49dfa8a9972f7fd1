import type { BigramModel, BigramSnapshot } from './bigram-model';

/** A base model the stand-in serves: its vocabulary size (the bigram table's) and tokenizer id. */
export interface StandInBaseModel {
  vocabSize: number;
  tokenizerId?: string;
  arch?: string;
}

/** The base models served unless options say otherwise. */
export const STAND_IN_BASE_MODELS: Record<string, StandInBaseModel> = {
  'Qwen/Qwen3-8B': { vocabSize: 151_936, tokenizerId: 'Qwen/Qwen3-8B', arch: 'qwen3' },
  'Qwen/Qwen3-4B-Instruct-2507': { vocabSize: 151_936, tokenizerId: 'Qwen/Qwen3-4B-Instruct-2507', arch: 'qwen3' },
  'meta-llama/Llama-3.1-8B-Instruct': {
    vocabSize: 128_256,
    tokenizerId: 'meta-llama/Llama-3.1-8B-Instruct',
    arch: 'llama',
  },
  'agl/bigram-512': { vocabSize: 512, arch: 'bigram' },
};

/** How a pending future answers one poll: `try_again` (200) or HTTP 408. */
export type PendingAnswer = 'try_again' | '408';

/** A training model on the stand-in. */
export interface StandInModel {
  modelId: string;
  sessionId: string;
  baseModel: string;
  loraRank: number;
  model: BigramModel;
  nextSeq: number;
  waiting: Map<number, () => void>;
}

/** A saved checkpoint. */
export interface StandInCheckpoint {
  path: string;
  kind: 'weights' | 'sampler_weights';
  baseModel: string;
  loraRank: number;
  snapshot: BigramSnapshot;
}

/** One `asample` the stand-in answered. */
export interface StandInSample {
  /** The sampler path sampled from, or `null` for a base model. */
  modelPath: string | null;
  baseModel: string;
  prompt: number[];
  /** The sample result (`{ sequences: [{ tokens, logprobs, stop_reason }] }`). */
  result: { sequences: Array<{ tokens: number[]; logprobs?: number[] | null }> };
}

/** A future on the stand-in. */
export interface Future {
  pending: PendingAnswer[];
  metadataSent: boolean;
  kind: 'json' | 'sample' | 'forward_backward';
  result?: unknown;
  error?: string;
  done: boolean;
}

/**
 * A request body after the SDK request-model check: fields are read as the schema allows them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are checked against TINKER_REQUEST_SCHEMAS first
export type WireBody = Record<string, any>;

/** The stand-in's state, shared by its HTTP layer and its routes. */
export interface StandInState {
  json: boolean;
  pendingScript: PendingAnswer[];
  baseModels: Record<string, StandInBaseModel>;
  random: () => number;
  sessions: Map<string, { heartbeats: number; tags: string[]; models: number; samplers: number }>;
  models: Map<string, StandInModel>;
  checkpoints: Map<string, StandInCheckpoint>;
  samplers: Map<string, { model: BigramModel; baseModel: string; modelPath: string | null }>;
  /** Every `asample` answered: where it sampled from, the prompt ids and the result the future returned. */
  sampled: StandInSample[];
  futures: Map<string, Future>;
  /** Injected failures of the next future per route. */
  futureFaults: Map<string, string>;
  /** The route being answered. */
  currentPath: string;
  futureCounter: number;
  /** Flags added to the `/api/v1/client/config` answer. */
  clientConfig: Record<string, unknown>;
}
