import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/index';
import { normalisePerRolloutLoss, rolloutLevelAdvantages, sampleAdvantages } from './rollout-level-advantages';
import type { TrainingSample } from './training-sample';

function row(rolloutId: string, reward: number, mask: number[], groupId = 'T', advantage = 0): TrainingSample {
  return {
    promptTokenIds: [1],
    responseTokenIds: mask.map((_, i) => 10 + i),
    responseMask: mask,
    advantage,
    groupId,
    taskId: groupId,
    rolloutId,
    attemptId: `at-${rolloutId}`,
    mode: 'train',
    reward,
    turnIndices: [0],
    agentName: null,
  };
}

// Task T: rollout r1 (reward 1) split into two rows, r2 and r3 (reward 0) one row each.
const rows = [row('r1', 1, [1, 1, 1]), row('r1', 1, [1, 0, 1]), row('r2', 0, [1, 1, 1, 1]), row('r3', 0, [1])];

describe('rolloutLevelAdvantages', () => {
  it('scores one representative per rollout and broadcasts it to every row (GRPO)', () => {
    const { samples, stats } = rolloutLevelAdvantages({ samples: rows });
    // rollout scores [1, 0, 0]: mean = 1/3; deviations 2/3, −1/3, −1/3; Σd² = 4/9 + 1/9 + 1/9 = 2/3;
    // var = (2/3)/(3−1) = 1/3; std = 0.5773503 → r1: (2/3)/(0.5773503+1e-6) = 1.1547, r2, r3: −0.5773493
    expect(samples[0]!.advantage).toBeCloseTo(1.1547, 4);
    expect(samples[1]!.advantage).toBe(samples[0]!.advantage);
    expect(samples[2]!.advantage).toBeCloseTo(-0.57735, 5);
    expect(samples[3]!.advantage).toBeCloseTo(-0.57735, 5);
    expect(stats).toEqual({ nRows: 4, nRollouts: 3, nMultiRowRollouts: 1, maxRowsPerRollout: 2 });
    // the input is not changed
    expect(rows[0]!.advantage).toBe(0);
  });

  it('differs from row-level GRPO, where the split rollout counts twice', () => {
    const samples = sampleAdvantages({ samples: rows });
    // row scores [1, 1, 0, 0]: mean 0.5; Σd² = 4·0.25 = 1; var = 1/3; std = 0.5773503 → ±0.5/0.5773513 = ±0.866024
    expect(samples.map((s) => s.advantage)).toEqual([
      expect.closeTo(0.866024, 5),
      expect.closeTo(0.866024, 5),
      expect.closeTo(-0.866024, 5),
      expect.closeTo(-0.866024, 5),
    ]);
  });

  it('supports RLOO over rollouts', () => {
    const { samples } = rolloutLevelAdvantages({ samples: rows, estimator: 'rloo' });
    // r1: 1 − (0+0)/2 = 1; r2: 0 − (1+0)/2 = −0.5; r3: −0.5
    expect(samples.map((s) => s.advantage)).toEqual([1, 1, -0.5, -0.5].map((v) => expect.closeTo(v, 12)));
  });

  it('refuses rows of one rollout with different rewards or groups', () => {
    const bad = [row('r1', 1, [1]), row('r1', 0.5, [1])];
    expect(() => rolloutLevelAdvantages({ samples: bad })).toThrow(ValidationError);
    expect(() => rolloutLevelAdvantages({ samples: bad })).toThrow(/rollout r1.*reward 1 vs 0\.5/);
    expect(() => rolloutLevelAdvantages({ samples: [row('r1', 1, [1], 'A'), row('r1', 1, [1], 'B')] })).toThrow(
      /groupId "A" vs "B"/,
    );
  });

  it('rejects an unknown estimator by name', () => {
    expect(() => rolloutLevelAdvantages({ samples: rows, estimator: 'gae' as never })).toThrow(/"gae"/);
  });
});

describe('normalisePerRolloutLoss', () => {
  it('divides each advantage by (rollout trained tokens × trained rows), at least 1', () => {
    const input = [
      row('r1', 1, [1, 1, 1], 'T', 2), // r1 tokens: 3 + 2 = 5
      row('r1', 1, [1, 0, 1], 'T', 2),
      row('r2', 0, [1, 1, 1, 1], 'T', -1), // r2 tokens: 4
      row('r3', 0, [0, 0], 'T', -1), // no trained tokens: not a trained row; denominator max(1, 0·3) = 1
    ];
    // trained rows N = 3 → r1: 2/(5·3) = 0.1333333; r2: −1/(4·3) = −0.0833333; r3: −1/1 = −1
    const out = normalisePerRolloutLoss({ samples: input });
    expect(out[0]!.advantage).toBeCloseTo(2 / 15, 12);
    expect(out[1]!.advantage).toBeCloseTo(2 / 15, 12);
    expect(out[2]!.advantage).toBeCloseTo(-1 / 12, 12);
    expect(out[3]!.advantage).toBe(-1);
  });

  it('gives every rollout the same total weight whatever its token count', () => {
    // Σ over a rollout's trained tokens of |advantage| = |A|·T_r/(T_r·N) = |A|/N for every rollout
    const out = normalisePerRolloutLoss({
      samples: [row('a', 1, [1, 1, 1, 1, 1, 1], 'T', 1), row('b', 1, [1], 'T', 1)],
    });
    const weight = (i: number) => out[i]!.advantage * out[i]!.responseMask.reduce((x, y) => x + y, 0);
    // N = 2 → a: 1/(6·2)·6 = 0.5; b: 1/(1·2)·1 = 0.5
    expect(weight(0)).toBeCloseTo(0.5, 12);
    expect(weight(1)).toBeCloseTo(0.5, 12);
  });
});
