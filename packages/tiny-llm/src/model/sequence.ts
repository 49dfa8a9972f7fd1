import { SeededRng } from './rng';
import { logSoftmax, sampleToken, topK } from './sampler';
import type { InferenceModel, KvCache } from './inference-model';

/** What to generate for one sequence. */
export interface GenerationParams {
  promptIds: number[];
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topP: number;
  seed: number;
  /** Generation ends after emitting one of these (the token is included in the output). */
  stopIds: number[];
  /** Tokens emitted first, whatever the model prefers (used for `tool_choice`). Their logprobs are still reported. */
  forcedPrefix?: number[];
  /** Tokens that are never sampled. */
  bannedIds?: number[];
  /** How many alternatives to report per position (0 = none). */
  topLogprobs: number;
}

/** One generated token with its log-probability under the model (raw log-softmax, temperature 1). */
export interface GeneratedToken {
  id: number;
  logprob: number;
  top: Array<[number, number]>;
}

/** Why a sequence ended: a stop token, or the token/context budget. */
export type FinishReason = 'stop' | 'length';

/** The state of one sequence being generated; the scheduler drives it. */
export class Sequence {
  readonly model: InferenceModel;
  readonly params: GenerationParams;
  readonly cache: KvCache;
  readonly rng: SeededRng;
  readonly output: GeneratedToken[] = [];
  readonly #banned: Set<number>;
  readonly #stop: Set<number>;
  /** Next-token logits, once the prompt (and every chosen token) is in the cache. */
  logits: Float32Array | undefined;
  finishReason: FinishReason | undefined;

  constructor(model: InferenceModel, params: GenerationParams, cache?: KvCache) {
    this.model = model;
    this.params = params;
    this.cache = cache ?? model.newCache();
    this.rng = new SeededRng(params.seed);
    this.#banned = new Set(params.bannedIds ?? []);
    this.#stop = new Set(params.stopIds);
  }

  /** Chooses the next token from `logits`, records it, and returns it (or undefined when finished). */
  choose(): GeneratedToken | undefined {
    if (!this.logits || this.finishReason) return undefined;
    const logp = logSoftmax(this.logits);
    this.logits = undefined;
    const forced = this.params.forcedPrefix?.[this.output.length];
    const id =
      forced ??
      sampleToken(
        logp,
        { temperature: this.params.temperature, topP: this.params.topP, banned: this.#banned },
        this.rng,
      );
    const tok: GeneratedToken = { id, logprob: logp[id]!, top: topK(logp, this.params.topLogprobs) };
    this.output.push(tok);
    if (this.#stop.has(id)) this.finishReason = 'stop';
    else if (this.output.length >= this.params.maxTokens || this.cache.length >= this.model.config.maxSeqLen)
      this.finishReason = 'length';
    return tok;
  }
}

/**
 * Generates one sequence to the end in the calling thread (no scheduler): prefill with the KV cache, then one token at
 * a time. Used by tests and offline evaluation.
 */
export function generateSync(
  model: InferenceModel,
  params: GenerationParams,
): { tokens: GeneratedToken[]; finishReason: FinishReason } {
  const seq = new Sequence(model, params);
  seq.logits = model.prefill(seq.cache, params.promptIds);
  for (;;) {
    const tok = seq.choose()!;
    if (seq.finishReason) return { tokens: seq.output, finishReason: seq.finishReason };
    seq.logits = model.forward([{ cache: seq.cache, token: tok.id, wantLogits: true }])[0]!;
  }
}
