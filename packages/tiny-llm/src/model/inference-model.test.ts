import { describe, expect, it } from 'vitest';
import { randomTestWeights } from '../__fixtures__/tool-model';
import { TrainerCore } from '../train/trainer-core';
import { InferenceModel } from './inference-model';
import { logSoftmax } from './sampler';
import { generateSync, type GenerationParams } from './sequence';

const weights = randomTestWeights(11);
const model = new InferenceModel(weights);
const prompt = [256, 259, 104, 101, 108, 108, 111, 257, 260];
const greedy: GenerationParams = {
  promptIds: prompt,
  maxTokens: 16,
  temperature: 0,
  topP: 1,
  seed: 0,
  stopIds: [],
  topLogprobs: 2,
};

describe('InferenceModel (KV cache) against the tfjs training graph', () => {
  it('greedy generation with the KV cache equals greedy generation by full forward passes', async () => {
    const core = await TrainerCore.create({ weights });
    const cached = generateSync(model, greedy).tokens.map((t) => t.id);
    // Full-forward greedy: re-run the whole sequence through tfjs for every new token.
    const full: number[] = [];
    for (let i = 0; i < greedy.maxTokens; i++) {
      const last = Array.from(core.nextTokenLogits([...prompt, ...full]));
      full.push(last.indexOf(Math.max(...last)));
    }
    core.dispose();
    expect(cached).toEqual(full);
  });

  it("reports each token's logprob as the tfjs model's own log-softmax", async () => {
    const out = generateSync(model, { ...greedy, temperature: 1, seed: 5 });
    const core = await TrainerCore.create({ weights });
    const [lp] = core.responseLogprobs([{ promptTokenIds: prompt, responseTokenIds: out.tokens.map((t) => t.id) }]);
    core.dispose();
    out.tokens.forEach((t, i) => expect(t.logprob).toBeCloseTo(lp![i]!, 4));
    expect(out.tokens[0]!.top[0]![1]).toBeGreaterThanOrEqual(out.tokens[0]!.top[1]![1]);
  });

  it.each([
    ['the token-shift embedding', { prevTokenEmbedding: true }, ['prev_emb']],
    [
      'both token shifts (one and two back)',
      { prevTokenEmbedding: true, prev2TokenEmbedding: true },
      ['prev_emb', 'prev2_emb'],
    ],
    ['segment positions', { segmentPositions: true }, ['seg_emb']],
  ])('with %s: cached generation, logprobs and batching match the tfjs graph', async (_label, shifts, names) => {
    const shifted = randomTestWeights(12, shifts);
    for (const name of names) expect(Object.keys(shifted.params)).toContain(name);
    const m = new InferenceModel(shifted);
    const core = await TrainerCore.create({ weights: shifted });
    const out = generateSync(m, { ...greedy, temperature: 1, seed: 9 });
    const [lp] = core.responseLogprobs([{ promptTokenIds: prompt, responseTokenIds: out.tokens.map((t) => t.id) }]);
    out.tokens.forEach((t, i) => expect(t.logprob).toBeCloseTo(lp![i]!, 4));
    // A cache continued token by token (lastToken carried across calls and clones) equals one prefill.
    const a = m.newCache();
    m.prefill(a, prompt.slice(0, 3));
    const b = a.clone(shifted.config);
    const stepwise = m.prefill(b, prompt.slice(3));
    const whole = m.prefill(m.newCache(), prompt);
    const full = core.nextTokenLogits(prompt);
    core.dispose();
    for (let v = 0; v < whole.length; v += 13) {
      expect(stepwise[v]).toBeCloseTo(whole[v]!, 5);
      expect(whole[v]).toBeCloseTo(full[v]!, 4);
    }
  });

  it('gives the same logits for a batch of sequences as for each one alone', () => {
    const a = model.newCache();
    const b = model.newCache();
    model.prefill(a, prompt);
    model.prefill(b, prompt.slice(0, 4));
    const batched = model.forward([
      { cache: a, token: 120, wantLogits: true },
      { cache: b, token: 121, wantLogits: true },
    ]);
    const a2 = model.newCache();
    const b2 = model.newCache();
    const alone = [model.prefill(a2, [...prompt, 120]), model.prefill(b2, [...prompt.slice(0, 4), 121])];
    for (let k = 0; k < 2; k++)
      for (let v = 0; v < alone[k]!.length; v += 17) expect(batched[k]![v]).toBeCloseTo(alone[k]![v]!, 5);
  });

  it('samples deterministically under a seed and differently under another', () => {
    const params = { ...greedy, temperature: 1, topP: 0.9, maxTokens: 32 };
    const ids = (seed: number) => generateSync(model, { ...params, seed }).tokens.map((t) => t.id);
    expect(ids(42)).toEqual(ids(42));
    expect(ids(42)).not.toEqual(ids(43));
  });

  it('stops at a stop token and at the context length', () => {
    const first = generateSync(model, greedy).tokens[3]!.id;
    const stopped = generateSync(model, { ...greedy, stopIds: [first] });
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.tokens.at(-1)!.id).toBe(first);
    const long = generateSync(model, { ...greedy, maxTokens: 10_000, topLogprobs: 0 });
    expect(long.finishReason).toBe('length');
    expect(prompt.length + long.tokens.length).toBe(model.config.maxSeqLen + 1);
    expect(logSoftmax([0, 0]).every((x) => Math.abs(x - Math.log(0.5)) < 1e-12)).toBe(true);
  });
});
