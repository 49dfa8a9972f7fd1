import { rm } from 'node:fs/promises';
import type { TrainingSample } from '@agl/core/algorithms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomWeightsDir, testTrainer } from '../__fixtures__/tool-model';
import { WeightStore } from '../model/weight-store';
import { TinyTrainer } from '../worker/tiny-trainer';
import { TinyGrpoBackend } from './tiny-grpo-backend';

let dir: string;
let trainer: TinyTrainer;

beforeAll(async () => {
  dir = await randomWeightsDir('agl-tiny-grpo-', 3);
  trainer = await testTrainer(dir);
});
afterAll(async () => {
  await trainer?.close();
  await rm(dir, { recursive: true, force: true });
});

function sample(response: number[], advantage: number, logprobs: number[]): TrainingSample {
  return {
    promptTokenIds: [1, 72, 105, 3],
    responseTokenIds: response,
    responseMask: response.map(() => 1),
    logprobs,
    advantage,
    groupId: 'task-1',
    taskId: 'task-1',
    rolloutId: `ro-${advantage}`,
    attemptId: 'at-1',
    mode: 'train',
    reward: advantage > 0 ? 1 : 0,
    turnIndices: [0],
    agentName: null,
  } as TrainingSample;
}

describe('TinyGrpoBackend', () => {
  it('one GRPO step raises the logprob of the positive-advantage response and lowers the negative one, then serves a new version', async () => {
    const good = [50, 51, 52, 53];
    const bad = [60, 61, 62, 63];
    const pair = [
      { promptTokenIds: [1, 72, 105, 3], responseTokenIds: good },
      { promptTokenIds: [1, 72, 105, 3], responseTokenIds: bad },
    ];
    const before = await trainer.responseLogprobs(pair);
    const loaded: string[] = [];
    const backend = new TinyGrpoBackend({
      trainer,
      server: { url: 'http://127.0.0.1:9', loadWeights: async (v) => loaded.push(v) },
      clipEps: 0.2,
      klCoef: 0.01,
    });
    // Rollout-time logprobs = current ones (on-policy), as the server would have returned them.
    const result = await backend.train(
      [sample(good, 1, before[0]!), sample(bad, -1, before[1]!), sample([70], 0, [-5])],
      {},
    );
    const after = await trainer.responseLogprobs(pair);
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    expect(sum(after[0]!)).toBeGreaterThan(sum(before[0]!) + 1e-3);
    expect(sum(after[1]!)).toBeLessThan(sum(before[1]!) - 1e-3);
    expect(loaded).toEqual(['grpo-1']);
    expect(result.resources).toEqual({
      main_llm: {
        resourceType: 'llm',
        endpoint: 'http://127.0.0.1:9/v1',
        model: 'agl-tiny@grpo-1',
        samplingParameters: {},
      },
    });
    expect(result.metrics.trainedSamples).toBe(2); // the zero-advantage sample carries no gradient and is skipped
    expect(result.metrics.clipFraction).toBe(0); // first step on-policy: ratio 1 everywhere
    expect(result.metrics.rewardMean).toBeCloseTo(1 / 3, 6);
    expect(await new WeightStore({ dir }).list()).toContain('grpo-1');
  });

  it("runs each version's policy steps at the rate its learning-rate schedule gives", async () => {
    const own = await TinyTrainer.create({ weightsDir: dir, version: 'v0', optimizer: { learningRate: 1e-2 } });
    try {
      const good = [50, 51, 52, 53];
      const pair = [{ promptTokenIds: [1, 72, 105, 3], responseTokenIds: good }];
      const rates: number[] = [];
      const backend = new TinyGrpoBackend({
        trainer: own,
        server: { url: 'http://127.0.0.1:9', loadWeights: async () => undefined },
        versionPrefix: 'lr-',
        learningRate: (version) => {
          rates.push(version);
          return version === 1 ? 0 : 3e-3;
        },
      });
      const lp0 = await own.responseLogprobs(pair);
      await backend.train([sample(good, 1, lp0[0]!), sample([60, 61], -1, [-3, -3])], {});
      const lp1 = await own.responseLogprobs(pair);
      expect(lp1).toEqual(lp0); // version 1 at rate 0: no change
      await backend.train([sample(good, 1, lp1[0]!), sample([60, 61], -1, [-3, -3])], {});
      const lp2 = await own.responseLogprobs(pair);
      expect(lp2[0]!.reduce((a, b) => a + b, 0)).toBeGreaterThan(lp1[0]!.reduce((a, b) => a + b, 0) + 1e-3);
      expect(rates).toEqual([1, 2]);
    } finally {
      await own.close();
    }
  });
});
