import { describe, expect, it } from 'vitest';
import { call, trajectory } from './__fixtures__/trajectories';
import { buildTrainingSamples } from './build-training-samples';
import { rewardStatistics } from './training-backend';

// Task A: rollout a1 (reward 1, two merged calls), rollout a2 (reward 0, a mismatch → two rows).
// Task B: rollout b1 (reward 0.5, one call), rollout b2 (no reward → fill value 0).
const trajectories = [
  trajectory({
    rolloutId: 'a1',
    taskId: 'A',
    finalReward: 1,
    transitions: [call({ prompt: [1], response: [2] }), call({ prompt: [1, 2, 3], response: [4] })],
  }),
  trajectory({
    rolloutId: 'a2',
    taskId: 'A',
    finalReward: 0,
    transitions: [call({ prompt: [1], response: [5] }), call({ prompt: [1, 6], response: [7] })],
  }),
  trajectory({ rolloutId: 'b1', taskId: 'B', finalReward: 0.5, transitions: [call({ prompt: [8], response: [9] })] }),
  trajectory({ rolloutId: 'b2', taskId: 'B', transitions: [call({ prompt: [8], response: [10] })] }),
];

describe('buildTrainingSamples', () => {
  it('aggregates per trajectory and computes rollout-level GRPO by default', () => {
    const { samples, stats, rolloutLevel } = buildTrainingSamples({ trajectories });
    expect(samples.map((s) => [s.rolloutId, s.responseTokenIds, s.responseMask])).toEqual([
      ['a1', [2, 3, 4], [1, 0, 1]],
      ['a2', [5], [1]],
      ['a2', [7], [1]],
      ['b1', [9], [1]],
      ['b2', [10], [1]],
    ]);
    // A: rollouts [1, 0]: mean 0.5, std = √((0.25+0.25)/1) = 0.7071068 → ±0.5/0.7071078 = ±0.7071058
    // B: rollouts [0.5, 0]: mean 0.25, std = √((0.0625+0.0625)/1) = 0.3535534 → ±0.25/0.3535544 = ±0.7071048
    expect(samples.map((s) => s.advantage)).toEqual(
      [0.7071058, -0.7071058, -0.7071058, 0.7071048, -0.7071048].map((v) => expect.closeTo(v, 6)),
    );
    expect(stats).toMatchObject({
      nTrajectories: 4,
      nTrajectoriesWithSamples: 4,
      nTrajectoriesWithReward: 3,
      nSamples: 5,
      nTurns: 6,
      nMismatches: 1,
      nUnmergedTrajectories: 1,
    });
    expect(rolloutLevel).toEqual({ nRows: 5, nRollouts: 4, nMultiRowRollouts: 1, maxRowsPerRollout: 2 });
  });

  it('can work per transition with sample-level RLOO and no std', () => {
    const { samples, rolloutLevel } = buildTrainingSamples({
      trajectories,
      level: 'transition',
      advantage: { estimator: 'rloo', rolloutLevel: false },
    });
    // A rows: rewards [1, 1, 0, 0] (n = 4) → 1 − (1+0+0)/3 = 2/3 for a1's rows, 0 − (1+1+0)/3 = −2/3 for a2's rows
    // B rows: [0.5, 0] → 0.5 − 0 = 0.5, 0 − 0.5 = −0.5
    expect(samples.map((s) => s.advantage)).toEqual(
      [2 / 3, 2 / 3, -2 / 3, -2 / 3, 0.5, -0.5].map((v) => expect.closeTo(v, 12)),
    );
    expect(rolloutLevel).toBeUndefined();
  });

  it('leaves advantages at 0 with estimator none, and applies per-rollout loss normalisation when asked', () => {
    expect(
      buildTrainingSamples({ trajectories, advantage: { estimator: 'none' } }).samples.every((s) => s.advantage === 0),
    ).toBe(true);
    const { samples } = buildTrainingSamples({
      trajectories,
      advantage: { normalizeByStd: false, perRolloutLossNormalisation: true },
    });
    // no std: A ±0.5, B ±0.25. Trained rows N = 5. Tokens: a1 2, a2 1+1 = 2, b1 1, b2 1.
    // a1: 0.5/(2·5) = 0.05; a2: −0.5/(2·5) = −0.05; b1: 0.25/(1·5) = 0.05; b2: −0.05
    expect(samples.map((s) => s.advantage)).toEqual(
      [0.05, -0.05, -0.05, 0.05, -0.05].map((v) => expect.closeTo(v, 12)),
    );
  });

  it('scores rows individually when a discount gives the rows of one rollout different returns', () => {
    const { samples, rolloutLevel } = buildTrainingSamples({ trajectories, reward: { discount: 0.5 } });
    // a2's rows: call 0 → 0.5·0 = 0, call 1 → 0; a1's merged row: 0.5·1 = 0.5 (return of its first call)
    // A rows [0.5, 0, 0]: mean 1/6; deviations 1/3, −1/6, −1/6; Σd² = 1/9 + 1/36 + 1/36 = 1/6; var = 1/12;
    // std = 0.2886751 → a1: (1/3)/0.2886761 = 1.1547; a2: (−1/6)/0.2886761 = −0.57735
    // B rows [0.5, 0]: mean 0.25, std 0.3535534 → ±0.7071048
    expect(rolloutLevel).toBeUndefined();
    expect(samples.map((s) => s.reward)).toEqual([0.5, 0, 0, 0.5, 0]);
    expect(samples.map((s) => s.advantage)).toEqual(
      [1.1547, -0.57735, -0.57735, 0.7071048, -0.7071048].map((v) => expect.closeTo(v, 4)),
    );
  });

  it('reward statistics use the population std', () => {
    // rewards [1, 0, 0, 0.5, 0]: mean 0.3; Σd² = 0.49 + 0.09·3 + 0.04 = 0.8; /5 = 0.16 → std 0.4
    const { samples } = buildTrainingSamples({ trajectories });
    const stats = rewardStatistics(samples);
    expect(stats.rewardMean).toBeCloseTo(0.3, 12);
    expect(stats.rewardStd).toBeCloseTo(0.4, 12);
  });
});
