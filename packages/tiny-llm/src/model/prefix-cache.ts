import type { InferenceModel, KvCache } from './inference-model';
import { nextSegmentPosition } from '../tokenizer/tiny-tokenizer';

interface Entry {
  model: InferenceModel;
  tokens: readonly number[];
  keys: Float32Array[];
  values: Float32Array[];
  bytes: number;
}

/** Length of the common prefix of `a` and `b`, at most `limit`. */
function commonPrefix(a: readonly number[], b: readonly number[], limit: number): number {
  const n = Math.min(a.length, b.length, limit);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * The KV caches of recent token sequences (prompts, and prompts with what was generated after them), so that a prompt
 * sharing a prefix with one of them prefills only the rest: the rollouts of one task send the same first prompt, and
 * an agent's next call repeats the previous call's prompt and answer (vLLM calls this automatic prefix caching).
 * Reuse is exact: a position's keys and values depend only on the model and the tokens up to it, and every row of a
 * forward pass is computed alone, so the logits are bit-identical to a full prefill. Entries belong to one model
 * (weights version); the least recently used go first once `maxBytes` is exceeded.
 */
export class PrefixCache {
  readonly #maxBytes: number;
  /** Least recently used first. */
  #entries: Entry[] = [];
  #bytes = 0;
  readonly #forgotten = new WeakSet<InferenceModel>();
  /** Prompt positions taken from the cache, and prompt positions asked for in all (for stats). */
  reusedTokens = 0;
  promptTokens = 0;

  constructor(maxBytes = 32 * 1024 * 1024) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Fills the empty `cache` with the longest remembered prefix of `tokens` for `model`, leaving at least the last token
   * to prefill (its logits are needed). Returns how many positions it filled (0 when nothing matched).
   */
  restore(model: InferenceModel, cache: KvCache, tokens: readonly number[]): number {
    this.promptTokens += tokens.length;
    let best: Entry | null = null;
    let length = 0;
    for (const e of this.#entries) {
      if (e.model !== model) continue;
      const n = commonPrefix(e.tokens, tokens, tokens.length - 1);
      if (n > length) {
        best = e;
        length = n;
      }
    }
    if (!best) return 0;
    const used = length * model.config.dModel;
    for (let l = 0; l < best.keys.length; l++) {
      cache.keys[l]!.set(best.keys[l]!.subarray(0, used));
      cache.values[l]!.set(best.values[l]!.subarray(0, used));
    }
    cache.length = length;
    cache.lastToken = tokens[length - 1]!;
    cache.lastToken2 = length >= 2 ? tokens[length - 2]! : -1;
    let segPos = -1;
    for (let i = 0; i < length; i++) segPos = nextSegmentPosition(segPos, tokens[i]!);
    cache.segPos = segPos;
    this.#touch(best);
    this.reusedTokens += length;
    return length;
  }

  /** Remembers `cache`, which holds exactly `tokens`, for `model`. A remembered prefix of it is replaced. */
  remember(model: InferenceModel, tokens: readonly number[], cache: KvCache): void {
    if (tokens.length === 0 || cache.length !== tokens.length || this.#forgotten.has(model)) return;
    for (const e of this.#entries) {
      if (
        e.model === model &&
        e.tokens.length >= tokens.length &&
        commonPrefix(e.tokens, tokens, tokens.length) === tokens.length
      ) {
        this.#touch(e);
        return;
      }
    }
    this.#entries = this.#entries.filter((e) => {
      const covered = e.model === model && commonPrefix(e.tokens, tokens, e.tokens.length) === e.tokens.length;
      if (covered) this.#bytes -= e.bytes;
      return !covered;
    });
    const used = tokens.length * model.config.dModel;
    const entry: Entry = {
      model,
      tokens: tokens.slice(),
      keys: cache.keys.map((k) => k.slice(0, used)),
      values: cache.values.map((v) => v.slice(0, used)),
      bytes: 2 * cache.keys.length * used * 4 + tokens.length * 8,
    };
    if (entry.bytes > this.#maxBytes) return;
    this.#entries.push(entry);
    this.#bytes += entry.bytes;
    while (this.#bytes > this.#maxBytes) this.#bytes -= this.#entries.shift()!.bytes;
  }

  /** Drops every entry of `model` and remembers nothing more for it (its weights were unloaded). */
  forget(model: InferenceModel): void {
    this.#forgotten.add(model);
    this.#entries = this.#entries.filter((e) => {
      if (e.model === model) this.#bytes -= e.bytes;
      return e.model !== model;
    });
  }

  #touch(entry: Entry): void {
    const i = this.#entries.indexOf(entry);
    if (i >= 0 && i < this.#entries.length - 1) {
      this.#entries.splice(i, 1);
      this.#entries.push(entry);
    }
  }
}
