import { describe, expect, it } from 'vitest';
import { sequenceBlocks, spreadSequenceIds } from './sequence-blocks';

describe('sequence id blocks', () => {
  it('give the ids one bump per request would, with one bump per rollout', () => {
    let seed = 5;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const perRequest = new Map<string, number>();
    const perRollout = new Map<string, number>();
    for (let round = 0; round < 50; round += 1) {
      const pairs = Array.from({ length: 1 + random(40) }, () => [`ro-${random(6)}`, `at-${random(2)}`] as const);
      const expected = pairs.map(([r]) => {
        perRequest.set(r, (perRequest.get(r) ?? 0) + 1);
        return perRequest.get(r)!;
      });
      const counts = sequenceBlocks(pairs);
      const lastIds = new Map<string, number>();
      for (const [r, count] of counts) {
        perRollout.set(r, (perRollout.get(r) ?? 0) + count);
        lastIds.set(r, perRollout.get(r)!);
      }
      expect(spreadSequenceIds(pairs, counts, lastIds)).toEqual(expected);
    }
  });
});
