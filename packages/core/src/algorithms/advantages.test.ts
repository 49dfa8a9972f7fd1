import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/index';
import { grpoAdvantages } from './grpo-advantages';
import { rlooAdvantages } from './rloo-advantages';

// Group A: [1, 0, 0.5]; group B: [2, 4]; group C: [0.7] (a single member). Items interleaved on purpose.
const scores = [1, 2, 0, 0.7, 0.5, 4];
const groupIds = ['A', 'B', 'A', 'C', 'A', 'B'];

describe('grpoAdvantages', () => {
  it('normalises by group mean and sample std (n − 1)', () => {
    const a = grpoAdvantages({ scores, groupIds });
    // A: mean = 1.5/3 = 0.5; deviations 0.5, −0.5, 0; Σd² = 0.5; var = 0.5/(3−1) = 0.25; std = 0.5
    //    → 0.5/(0.5+1e-6) = 0.999998, −0.999998, 0
    expect(a[0]).toBeCloseTo(0.5 / 0.500001, 12);
    expect(a[0]).toBeCloseTo(0.999998, 6);
    expect(a[2]).toBeCloseTo(-0.999998, 6);
    expect(a[4]).toBe(0);
    // B: mean = 3; deviations −1, 1; Σd² = 2; var = 2/1 = 2; std = √2 = 1.4142136 → ∓1/1.4142146 = ∓0.7071063
    expect(a[1]).toBeCloseTo(-0.7071063, 6);
    expect(a[5]).toBeCloseTo(0.7071063, 6);
    // C: a group of one has mean 0 and std 1 (verl) → 0.7/(1+1e-6) = 0.6999993
    expect(a[3]).toBeCloseTo(0.6999993, 6);
  });

  it('without std normalisation, only subtracts the group mean', () => {
    const a = grpoAdvantages({ scores, groupIds, normalizeByStd: false });
    // A − 0.5: [0.5, −0.5, 0]; B − 3: [−1, 1]; C: 0.7 − 0 = 0.7
    expect(a).toEqual([0.5, -1, -0.5, 0.7, 0, 1]);
  });

  it('gives zero advantage to a group whose rewards are all equal', () => {
    // mean = 1, deviations 0 → 0/(0 + 1e-6) = 0
    expect(grpoAdvantages({ scores: [1, 1, 1], groupIds: ['g', 'g', 'g'] })).toEqual([0, 0, 0]);
  });

  it('rejects misaligned or non-finite input', () => {
    expect(() => grpoAdvantages({ scores: [1, 2], groupIds: ['g'] })).toThrow(ValidationError);
    expect(() => grpoAdvantages({ scores: [1, Number.NaN], groupIds: ['g', 'g'] })).toThrow(/scores\[1\]/);
  });
});

describe('rlooAdvantages', () => {
  it('subtracts the mean of the other members of the group', () => {
    const a = rlooAdvantages({ scores, groupIds });
    // A: 1 − (0+0.5)/2 = 0.75; 0 − (1+0.5)/2 = −0.75; 0.5 − (1+0)/2 = 0
    expect(a[0]).toBeCloseTo(0.75, 12);
    expect(a[2]).toBeCloseTo(-0.75, 12);
    expect(a[4]).toBeCloseTo(0, 12);
    // B: 2 − 4 = −2; 4 − 2 = 2
    expect(a[1]).toBeCloseTo(-2, 12);
    expect(a[5]).toBeCloseTo(2, 12);
    // C: a group of one keeps its score
    expect(a[3]).toBe(0.7);
  });
});
