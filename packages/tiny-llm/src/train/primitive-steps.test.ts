import { describe, expect, it } from 'vitest';
import { randomTestWeights, TOOL_EXAMPLES } from '../__fixtures__/tool-model';
import type { PrimitiveDatum } from './primitive-steps';
import { TrainerCore } from './trainer-core';

const ADAM = { learningRate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 };

/** Rows as Tinker datums: input = ids[:-1], targets = ids[1:], weights = the assistant mask shifted the same way. */
function sftDatums(core: TrainerCore): PrimitiveDatum[] {
  return core.sftRows(TOOL_EXAMPLES).map((r) => ({
    tokens: r.ids.slice(0, -1),
    targetTokens: r.ids.slice(1),
    weights: r.mask.slice(1),
  }));
}

describe('forwardBackward / optimStep (Tinker primitives)', () => {
  it('cross_entropy is the summed weighted NLL and its logprobs are the targets’ logprobs', async () => {
    const core = await TrainerCore.create({ weights: randomTestWeights(4) });
    const datums = sftDatums(core);
    const rows = core.sftRows(TOOL_EXAMPLES);
    const tokens = rows.reduce((s, r) => s + r.mask.slice(1).reduce((a, b) => a + b, 0), 0);
    const out = core.forwardBackward({ datums, lossFn: 'cross_entropy', forwardOnly: true });
    expect(out.metrics['loss:sum']).toBeCloseTo(core.sftLoss(rows) * tokens, 2);
    const d0 = datums[0]!;
    expect(out.outputs[0]!.logprobs).toHaveLength(d0.tokens.length);
    const next = core.nextTokenLogits(d0.tokens.slice(0, 3));
    const max = Math.max(...next);
    const lse = max + Math.log(next.reduce((s, x) => s + Math.exp(x - max), 0));
    expect(out.outputs[0]!.logprobs[2]).toBeCloseTo(next[d0.targetTokens[2]!]! - lse, 4);
    core.dispose();
  });

  it('accumulates gradients across calls: two halves then one step equal one call on all', async () => {
    const w = randomTestWeights(6);
    const a = await TrainerCore.create({ weights: w });
    const b = await TrainerCore.create({ weights: w });
    const datums = sftDatums(a);
    a.forwardBackward({ datums, lossFn: 'cross_entropy' });
    a.optimStep(ADAM);
    b.forwardBackward({ datums: datums.slice(0, 1), lossFn: 'cross_entropy' });
    b.forwardBackward({ datums: datums.slice(1), lossFn: 'cross_entropy' });
    b.optimStep(ADAM);
    const wa = a.weights().params['l0.w1']!;
    const wb = b.weights().params['l0.w1']!;
    for (let i = 0; i < 50; i++) expect(wb[i]).toBeCloseTo(wa[i]!, 5);
    expect(wa[0]).not.toBe(w.params['l0.w1']![0]);
    a.dispose();
    b.dispose();
  });

  it('importance_sampling raises the logprob of positively advantaged samples; zero advantages change no weight', async () => {
    const core = await TrainerCore.create({ weights: randomTestWeights(8) });
    const datums = sftDatums(core);
    const before = core.forwardBackward({ datums, lossFn: 'cross_entropy', forwardOnly: true });
    const rl = (adv: number): PrimitiveDatum[] =>
      datums.map((d, i) => ({
        ...d,
        logprobs: before.outputs[i]!.logprobs,
        advantages: d.weights!.map((x) => x * adv),
      }));
    const w0 = core.weights().params['tok_emb']!.slice();
    core.forwardBackward({ datums: rl(0), lossFn: 'importance_sampling' });
    core.optimStep(ADAM);
    expect(core.weights().params['tok_emb']).toEqual(w0);
    for (let i = 0; i < 3; i++) {
      const r = core.forwardBackward({ datums: rl(1), lossFn: i === 2 ? 'ppo' : 'importance_sampling' });
      expect(r.metrics['loss:sum']).toBeLessThan(0);
      core.optimStep(ADAM);
    }
    const after = core.forwardBackward({ datums, lossFn: 'cross_entropy', forwardOnly: true });
    expect(after.metrics['loss:sum']).toBeLessThan(before.metrics['loss:sum']!);
    core.dispose();
  });

  it('names the bad field', async () => {
    const core = await TrainerCore.create({ weights: randomTestWeights(8) });
    const [d] = sftDatums(core);
    expect(() => core.forwardBackward({ datums: [{ ...d!, advantages: undefined }], lossFn: 'ppo' })).toThrow(
      /data\[0\]\.loss_fn_inputs\.advantages is required by ppo/,
    );
    expect(() => core.forwardBackward({ datums: [{ ...d!, weights: [1] }], lossFn: 'cross_entropy' })).toThrow(
      /weights has 1 values/,
    );
    expect(() => core.optimStep({ ...ADAM, learningRate: -1 })).toThrow(/adam_params\.learning_rate/);
    core.dispose();
  });
});
