import { describe, expect, it } from 'vitest';
import { randomTestWeights, TOOL_EXAMPLES } from '../__fixtures__/tool-model';
import { InferenceModel } from '../model/inference-model';
import { SeededRng } from '../model/rng';
import { generateSync } from '../model/sequence';
import { paramShapes } from '../model/tiny-config';
import { cloneWeights } from '../model/tiny-weights';
import { TrainerCore } from './trainer-core';

describe('TrainerCore', () => {
  it('has gradients that match finite differences (directional check)', async () => {
    const weights = randomTestWeights(21);
    const core = await TrainerCore.create({ weights });
    const rows = core.sftRows(TOOL_EXAMPLES);
    const grads = core.sftGradients(rows);
    const rng = new SeededRng(3);
    for (let trial = 0; trial < 2; trial++) {
      const dir: Record<string, Float32Array> = {};
      let analytic = 0;
      for (const p of paramShapes(weights.config)) {
        const g = grads[p.name]!;
        const v = new Float32Array(g.length);
        for (let i = 0; i < v.length; i++) v[i] = rng.normal();
        dir[p.name] = v;
        for (let i = 0; i < v.length; i++) analytic += g[i]! * v[i]!;
      }
      const eps = 1e-3;
      const shifted = (sign: number) => {
        const w = cloneWeights(weights);
        for (const [k, v] of Object.entries(dir))
          for (let i = 0; i < v.length; i++) w.params[k]![i]! += sign * eps * v[i]!;
        core.setWeights(w);
        return core.sftLoss(rows);
      };
      const numeric = (shifted(1) - shifted(-1)) / (2 * eps);
      expect(Math.abs(numeric - analytic) / Math.max(1e-3, Math.abs(analytic))).toBeLessThan(0.03);
    }
    // Spot-check single coordinates of the embedding and an MLP matrix as well.
    for (const [name, idx] of [
      ['tok_emb', 104 * 32 + 3],
      ['l1.w1', 77],
    ] as const) {
      const eps = 1e-2;
      const at = (delta: number) => {
        const w = cloneWeights(weights);
        w.params[name]![idx]! += delta;
        core.setWeights(w);
        return core.sftLoss(rows);
      };
      const numeric = (at(eps) - at(-eps)) / (2 * eps);
      expect(numeric).toBeCloseTo(grads[name]![idx]!, 3);
    }
    core.dispose();
  });

  it('lowers the SFT loss on assistant tokens, deterministically', async () => {
    const run = async () => {
      const core = await TrainerCore.create({ weights: randomTestWeights(5), optimizer: { learningRate: 1e-2 } });
      const steps = core.sft({ examples: TOOL_EXAMPLES, steps: 15, batchSize: 2, seed: 9 });
      core.dispose();
      return steps.map((s) => s.loss);
    };
    const a = await run();
    expect(a.at(-1)!).toBeLessThan(a[0]! * 0.7);
    expect(await run()).toEqual(a);
  });

  it('one policy step raises the logprob of positive-advantage responses and lowers negative ones', async () => {
    const core = await TrainerCore.create({
      weights: randomTestWeights(8),
      optimizer: { learningRate: 3e-3 },
      reference: 'initial',
    });
    const prompt = [256, 259, 97, 257, 260];
    const good = { promptTokenIds: prompt, responseTokenIds: [49, 50, 51, 257], advantage: 1 };
    const bad = { promptTokenIds: prompt, responseTokenIds: [120, 121, 257], advantage: -1 };
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const [g0, b0] = core.responseLogprobs([good, bad]).map(sum);
    const oldLp = core.responseLogprobs([good, bad]);
    const m = core.policyStep({
      samples: [
        { ...good, logprobs: oldLp[0] },
        { ...bad, logprobs: oldLp[1] },
      ],
      clipEps: 0.2,
      klCoef: 0.01,
    });
    const [g1, b1] = core.responseLogprobs([good, bad]).map(sum);
    expect(g1!).toBeGreaterThan(g0!);
    expect(b1!).toBeLessThan(b0!);
    expect(m.ratioMean).toBeCloseTo(1, 5);
    expect(m.clipFraction).toBe(0);
    expect(m.kl).toBeCloseTo(0, 6);
    expect(m.tokens).toBe(7);
    expect(m.entropy).toBeGreaterThan(0);
    // A second step now sees a moved policy: nonzero KL to the reference and old/new drift.
    const m2 = core.policyStep({
      samples: [
        { ...good, logprobs: oldLp[0] },
        { ...bad, logprobs: oldLp[1] },
      ],
      klCoef: 0.01,
    });
    expect(m2.kl).toBeGreaterThan(0);
    expect(Math.abs(m2.ratioMean - 1)).toBeGreaterThan(1e-4);
    core.dispose();
  });

  it('aggregates the loss per token or per sequence', async () => {
    const core = await TrainerCore.create({ weights: randomTestWeights(12), optimizer: { learningRate: 0 } });
    const samples = [
      { promptTokenIds: [256, 97], responseTokenIds: [98, 99, 100, 257], advantage: 1 },
      { promptTokenIds: [256, 97], responseTokenIds: [101, 257], advantage: -1 },
    ];
    // On-policy, no KL: each token's loss is -advantage.
    expect(core.policyStep({ samples }).loss).toBeCloseTo(-(4 - 2) / 6, 6);
    expect(core.policyStep({ samples, lossAggregation: 'sequence-mean' }).loss).toBeCloseTo(0, 6);
    core.dispose();
  });

  it('takes a learning rate per policy step (a schedule): 0 leaves the weights, a rate stays until changed', async () => {
    const samples = [
      { promptTokenIds: [256, 97], responseTokenIds: [98, 99, 257], advantage: 1 },
      { promptTokenIds: [256, 97], responseTokenIds: [101, 257], advantage: -1 },
    ];
    const distance = (a: Record<string, Float32Array>, b: Record<string, Float32Array>): number => {
      let d = 0;
      for (const k of Object.keys(a))
        for (let i = 0; i < a[k]!.length; i++) d = Math.max(d, Math.abs(a[k]![i]! - b[k]![i]!));
      return d;
    };
    const core = await TrainerCore.create({ weights: randomTestWeights(14), optimizer: { learningRate: 1e-2 } });
    const w0 = core.weights().params;
    core.policyStep({ samples, learningRate: 0 });
    const w1 = core.weights().params;
    expect(distance(w0, w1)).toBe(0);
    core.policyStep({ samples, learningRate: 1e-3 });
    const w2 = core.weights().params;
    // Adam's first steps move each parameter by about the learning rate.
    expect(distance(w1, w2)).toBeGreaterThan(5e-4);
    expect(distance(w1, w2)).toBeLessThan(2e-3);
    core.policyStep({ samples });
    expect(distance(w2, core.weights().params)).toBeLessThan(2e-3);
    expect(() => core.policyStep({ samples, learningRate: -1 })).toThrow(
      /learningRate must be a finite number ≥ 0, got -1/,
    );
    core.dispose();
  });

  it('an on-policy step with advantage 1 on demonstration rows makes exactly the SFT step (same tokens, same gradient)', async () => {
    const weights = randomTestWeights(13);
    const sft = await TrainerCore.create({ weights, optimizer: { learningRate: 1e-2 } });
    const pg = await TrainerCore.create({ weights, optimizer: { learningRate: 1e-2 } });
    const rows = sft.sftRows(TOOL_EXAMPLES);
    // The assistant-masked row as a policy sample: the prompt up to the first trained token, the rest as the response.
    const samples = rows.map((row) => {
      const k = row.mask.indexOf(1);
      return {
        promptTokenIds: row.ids.slice(0, k),
        responseTokenIds: row.ids.slice(k),
        responseMask: row.mask.slice(k),
        advantage: 1,
      };
    });
    const a = sft.sftStep(rows);
    const b = pg.policyStep({ samples });
    expect(b.tokens).toBe(a.tokens);
    expect(b.gradNorm).toBeCloseTo(a.gradNorm, 5);
    for (const name of ['tok_emb', 'l0.wqkv', 'l1.w2']) {
      const before = weights.params[name]!;
      const [x, y] = [sft.weights().params[name]!, pg.weights().params[name]!];
      let moved = 0;
      for (let i = 0; i < x.length; i++) {
        expect(y[i]! - before[i]!).toBeCloseTo(x[i]! - before[i]!, 6);
        if (x[i] !== before[i]) moved += 1;
      }
      expect(moved).toBeGreaterThan(x.length / 2);
    }
    sft.dispose();
    pg.dispose();
  });

  it('zero advantages and no KL leave the weights unchanged', async () => {
    const weights = randomTestWeights(9);
    const core = await TrainerCore.create({ weights });
    core.policyStep({ samples: [{ promptTokenIds: [256, 97], responseTokenIds: [98, 257], advantage: 0 }] });
    expect(Array.from(core.weights().params['l0.w1']!.slice(0, 8))).toEqual(
      Array.from(weights.params['l0.w1']!.slice(0, 8)),
    );
    core.dispose();
  });

  it('names the bad field of a malformed sample', async () => {
    const core = await TrainerCore.create({ weights: randomTestWeights(1) });
    expect(() =>
      core.policyStep({ samples: [{ promptTokenIds: [1], responseTokenIds: [2, 3], logprobs: [0], advantage: 1 }] }),
    ).toThrow(/PolicySample\.logprobs has 1 entries for 2/);
    core.dispose();
  });
});

describe('checkpoints', () => {
  it('resume training exactly: weights and Adam state round-trip through a file', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { saveCheckpoint, loadCheckpoint } = await import('./checkpoint');
    const dir = await mkdtemp(join(tmpdir(), 'agl-tiny-ckpt-'));
    const opt = { learningRate: 5e-3 };
    const a = await TrainerCore.create({ weights: randomTestWeights(4), optimizer: opt });
    const rows = a.sftRows(TOOL_EXAMPLES);
    a.sftStep(rows);
    a.sftStep(rows);
    await saveCheckpoint({ path: join(dir, 'ckpt.bin'), state: await a.exportState({ round: 2 }) });
    const next = a.sftStep(rows).loss;
    const after = a.sftStep(rows).loss;
    const state = await loadCheckpoint(join(dir, 'ckpt.bin'));
    expect(state.meta).toEqual({ round: 2 });
    const b = await TrainerCore.create({ weights: state.weights, optimizer: opt, optimizerState: state.optimizer });
    expect(b.steps).toBe(2);
    expect(b.sftStep(rows).loss).toBe(next);
    // Adam's bias correction is recomputed as beta^t on resume (not the running product): equal to float rounding.
    const resumed = b.sftStep(rows).loss;
    expect(resumed).toBeCloseTo(after, 5);
    // Without the Adam state the moments restart and the run visibly diverges.
    const c = await TrainerCore.create({ weights: state.weights, optimizer: opt });
    c.sftStep(rows);
    expect(Math.abs(c.sftStep(rows).loss - after)).toBeGreaterThan(100 * Math.abs(resumed - after) + 1e-4);
    for (const t of [a, b, c]) t.dispose();
    await rm(dir, { recursive: true, force: true });
  });
});

describe('TrainerCore.sftAccuracy', () => {
  it('scores SFT rows by teacher-forced argmax: exactMatch is what greedy decoding reproduces', async () => {
    const core = await TrainerCore.create({ weights: randomTestWeights(5), optimizer: { learningRate: 1e-2 } });
    // One assistant turn each: the call, and the text answer.
    const rows = core.sftRows([TOOL_EXAMPLES[0]!, TOOL_EXAMPLES[2]!]);
    const seen = new Set<number>();
    for (let round = 0; round < 8; round++) {
      const model = new InferenceModel(core.weights());
      for (const row of rows) {
        const start = row.mask.indexOf(1);
        const target = row.ids.slice(start);
        const greedy = generateSync(model, {
          promptIds: row.ids.slice(0, start),
          maxTokens: target.length,
          temperature: 0,
          topP: 1,
          seed: 0,
          stopIds: [],
          topLogprobs: 0,
        });
        const reproduced = greedy.tokens.map((t) => t.id).join() === target.join() ? 1 : 0;
        const acc = core.sftAccuracy([row]);
        expect(acc.exactMatch).toBe(reproduced);
        expect(acc.tokens).toBe(target.length);
        seen.add(reproduced);
      }
      core.sft({ examples: TOOL_EXAMPLES, steps: 10, batchSize: 3, seed: round });
    }
    expect([...seen].sort()).toEqual([0, 1]); // both outcomes occurred, so the comparison was not vacuous
    // A learned row whose last target (no later target reads it) is changed: that token alone is wrong.
    const [answer] = core.sftRows([TOOL_EXAMPLES[2]!]);
    expect(core.sftAccuracy([answer!])).toMatchObject({ exactMatch: 1, tokenAccuracy: 1 });
    const k = answer!.mask.lastIndexOf(1);
    const changed = { ids: answer!.ids.map((id, i) => (i === k ? (id === 65 ? 66 : 65) : id)), mask: answer!.mask };
    const acc = core.sftAccuracy([answer!, changed]);
    expect(acc.exactMatch).toBe(0.5);
    expect(acc.tokenAccuracy).toBeCloseTo((acc.tokens - 1) / acc.tokens, 10);
    core.dispose();
  });
});
