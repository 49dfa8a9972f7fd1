import { describe, expect, it } from 'vitest';
import { randomTestWeights } from '../__fixtures__/tool-model';
import { InferenceModel } from './inference-model';
import { PrefixCache } from './prefix-cache';
import { generateSync } from './sequence';

// Both token shifts and segment positions on, so a restored cache must also carry the last two tokens and the
// position inside the current segment right.
const model = new InferenceModel(
  randomTestWeights(31, { prevTokenEmbedding: true, prev2TokenEmbedding: true, segmentPositions: true }),
);
const system = [256, 259, 104, 101, 108, 108, 111, 257, 258, 97, 100];
const promptA = [...system, 49, 50, 51, 257, 260];
const promptB = [...system, 55, 56, 257, 260];

/** Prefill `prompt` through `cache` (restore + the rest) and return the logits and how much was reused. */
function prefillVia(cache: PrefixCache, prompt: number[]): { logits: Float32Array; reused: number } {
  const kv = model.newCache();
  const reused = cache.restore(model, kv, prompt);
  const logits = model.prefill(kv, prompt.slice(reused));
  cache.remember(model, prompt, kv);
  return { logits, reused };
}

describe('PrefixCache', () => {
  it('prefills only what follows the longest remembered prefix, with bit-identical logits', () => {
    const cache = new PrefixCache();
    expect(prefillVia(cache, promptA).reused).toBe(0);
    const b = prefillVia(cache, promptB);
    expect(b.reused).toBe(system.length);
    expect(b.logits).toEqual(model.prefill(model.newCache(), promptB));
    // The same prompt again: everything but the last token, whose logits are needed.
    const again = prefillVia(cache, promptB);
    expect(again.reused).toBe(promptB.length - 1);
    expect(again.logits).toEqual(b.logits);
    expect(cache.reusedTokens).toBe(system.length + promptB.length - 1);
    expect(cache.promptTokens).toBe(promptA.length + 2 * promptB.length);
  });

  it("serves an agent's next call from the cache its previous answer left", () => {
    const params = { promptIds: promptA, maxTokens: 6, temperature: 0, topP: 1, seed: 0, stopIds: [], topLogprobs: 0 };
    const first = generateSync(model, params);
    // The worker remembers a finished sequence: the prompt and every chosen token but the last (never fed back).
    const kv = model.newCache();
    model.prefill(kv, promptA);
    const answer = first.tokens.map((t) => t.id);
    for (const id of answer.slice(0, -1)) model.forward([{ cache: kv, token: id, wantLogits: false }]);
    const cache = new PrefixCache();
    cache.remember(model, [...promptA, ...answer.slice(0, -1)], kv);
    const next = [...promptA, ...answer, 257, 53, 260];
    const viaCache = prefillVia(cache, next);
    expect(viaCache.reused).toBe(promptA.length + answer.length - 1);
    expect(viaCache.logits).toEqual(model.prefill(model.newCache(), next));
    expect(generateSync(model, { ...params, promptIds: next }).tokens.length).toBeGreaterThan(0);
  });

  it('replaces a remembered prefix by its extension, evicts the least recently used, and keeps models apart', () => {
    const kvA = model.newCache();
    model.prefill(kvA, promptA);
    const perEntry = (n: number) => 2 * model.config.nLayers * n * model.config.dModel * 4 + n * 8;
    const cache = new PrefixCache(perEntry(promptA.length) + perEntry(promptB.length));
    const short = model.newCache();
    model.prefill(short, system);
    cache.remember(model, system, short);
    cache.remember(model, promptA, kvA);
    expect(cache.bytes).toBe(perEntry(promptA.length)); // the system prefix entry was folded into promptA's
    const kvB = model.newCache();
    model.prefill(kvB, promptB);
    cache.remember(model, promptB, kvB);
    expect(cache.restore(model, model.newCache(), promptA)).toBe(promptA.length - 1); // promptA is now the most recent
    const other = [100, 101, 102, 103];
    const kvO = model.newCache();
    model.prefill(kvO, other);
    cache.remember(model, other, kvO); // over budget: promptB (least recently used) goes
    expect(cache.restore(model, model.newCache(), promptB)).toBe(system.length);
    expect(cache.restore(model, model.newCache(), other)).toBe(other.length - 1);
    // Another weights version never sees these entries, and a forgotten model is not remembered again.
    const model2 = new InferenceModel(randomTestWeights(32, { prevTokenEmbedding: true, prev2TokenEmbedding: true }));
    expect(cache.restore(model2, model2.newCache(), promptA)).toBe(0);
    cache.forget(model);
    expect(cache.bytes).toBe(0);
    cache.remember(model, promptA, kvA);
    expect(cache.restore(model, model.newCache(), promptA)).toBe(0);
  });

  it('ignores a cache that does not hold exactly the given tokens', () => {
    const cache = new PrefixCache();
    const kv = model.newCache();
    model.prefill(kv, promptA);
    cache.remember(model, promptA.slice(0, -1), kv);
    cache.remember(model, [], model.newCache());
    expect(cache.bytes).toBe(0);
  });
});
