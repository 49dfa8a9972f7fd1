import { describe, expect, it } from 'vitest';
import { seededRandom } from './seeded-random';

describe('seededRandom', () => {
  it('gives mulberry32 (the published sequence for seed 1) and the same sequence for the same seed', () => {
    const random = seededRandom(1);
    expect([random(), random(), random()]).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    const a = seededRandom(42);
    const b = seededRandom(42);
    expect(Array.from({ length: 1000 }, a)).toEqual(Array.from({ length: 1000 }, b));
    expect(seededRandom(43)()).not.toBe(seededRandom(42)());
  });

  it('takes any number as a 32-bit seed and stays in [0, 1)', () => {
    expect(seededRandom(2 ** 32 + 7)()).toBe(seededRandom(7)());
    expect(seededRandom(-1)()).toBe(seededRandom(0xffffffff)());
    const random = seededRandom(9);
    const values = Array.from({ length: 10_000 }, random);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    expect(values.reduce((s, v) => s + v, 0) / values.length).toBeCloseTo(0.5, 1);
  });
});
