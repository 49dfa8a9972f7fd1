import { describe, expect, it } from 'vitest';
import { seededRandom } from '@agl/core';
import {
  ATTRIBUTE_RANGES,
  flattenDict,
  generateAttributes,
  randomDict,
  randomString,
  type NestedRecord,
} from './random-attributes';

function depthOf(value: NestedRecord): number {
  const children = Object.values(value);
  return 1 + Math.max(0, ...children.map((c) => (typeof c === 'string' ? 0 : depthOf(c))));
}

function nodes(value: NestedRecord, out: NestedRecord[] = []): NestedRecord[] {
  out.push(value);
  for (const c of Object.values(value)) if (typeof c !== 'string') nodes(c, out);
  return out;
}

describe("AGL's random attribute generator", () => {
  it('keeps depth 1-3, breadth 2-6, keys 3-20 and values 5-300 characters, and reaches every bound', () => {
    const random = seededRandom(7);
    const seen = {
      depth: new Set<number>(),
      breadth: new Set<number>(),
      key: new Set<number>(),
      value: new Set<number>(),
    };
    for (let i = 0; i < 2000; i += 1) {
      const dict = randomDict(random);
      seen.depth.add(depthOf(dict));
      for (const node of nodes(dict)) {
        seen.breadth.add(Object.keys(node).length);
        for (const [key, child] of Object.entries(node)) {
          seen.key.add(key.length);
          if (typeof child === 'string') seen.value.add(child.length);
        }
      }
    }
    const range = (s: Set<number>): [number, number] => [Math.min(...s), Math.max(...s)];
    expect(range(seen.depth)).toEqual([...ATTRIBUTE_RANGES.depth]);
    expect(range(seen.breadth)).toEqual([...ATTRIBUTE_RANGES.breadth]);
    expect(range(seen.key)).toEqual([...ATTRIBUTE_RANGES.keyLength]);
    expect(range(seen.value)).toEqual([...ATTRIBUTE_RANGES.valueLength]);
  });

  it('flattens nested keys with dots into string leaves', () => {
    expect(flattenDict({ a: { b: 'x', c: { d: 'y' } }, e: 'z' })).toEqual({ 'a.b': 'x', 'a.c.d': 'y', e: 'z' });
    const flat = generateAttributes(seededRandom(3));
    const leaves = Object.entries(flat);
    expect(leaves.length).toBeGreaterThanOrEqual(2);
    expect(leaves.length).toBeLessThanOrEqual(6 ** 3);
    for (const [key, value] of leaves) {
      expect(key.split('.').length).toBeLessThanOrEqual(3);
      expect(value).toMatch(/^[A-Za-z0-9]{5,300}$/);
    }
  });

  it('builds the flat attributes with the same draws as flattenDict(randomDict())', () => {
    for (let seed = 1; seed <= 200; seed += 1) {
      expect({ ...generateAttributes(seededRandom(seed)) }).toEqual(flattenDict(randomDict(seededRandom(seed))));
    }
  });

  it('draws strings of the exact length from letters and digits', () => {
    const random = seededRandom(11);
    for (const n of [3, 20, 300]) expect(randomString(n, random)).toMatch(new RegExp(`^[A-Za-z0-9]{${n}}$`));
  });
});
