import { randomBytes } from 'node:crypto';

/** A source of uniform floats in [0, 1) (`Math.random` by default; tests inject a seeded one). */
export type Random = () => number;

/** AGL 0.3's `generate_attributes()` ranges (tests/benchmark/benchmark_store.py), all inclusive. */
export const ATTRIBUTE_RANGES = {
  depth: [1, 3],
  breadth: [2, 6],
  keyLength: [3, 20],
  valueLength: [5, 300],
} as const;

/** A flat span attribute map, as AGL's `flatten_dict(random_dict(...))` gives. */
export type FlatAttributes = Record<string, string>;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const POOL_SIZE = 1 << 16;
let pool: string | null = null;

/**
 * 64 KiB of random letters and digits, drawn once from the OS. Random strings are slices of it at random offsets:
 * the same length and alphabet as Python's `random.choices`, without paying one `Math.random()` per character (the
 * large scenario writes tens of MB of attributes per second on 2 cores).
 */
function charPool(): string {
  if (pool === null) {
    const bytes = randomBytes(POOL_SIZE);
    let out = '';
    for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
    pool = out;
  }
  return pool;
}

/** Uniform integer in [lo, hi] (Python's `random.randint`). */
export function randInt(lo: number, hi: number, random: Random = Math.random): number {
  return lo + Math.floor(random() * (hi - lo + 1));
}

/** Uniform float in [lo, hi) (Python's `random.uniform`). */
export function uniform(lo: number, hi: number, random: Random = Math.random): number {
  return lo + random() * (hi - lo);
}

/** A random alphanumeric string of exactly `length` characters. */
export function randomString(length: number, random: Random = Math.random): string {
  const source = charPool();
  const start = Math.floor(random() * (source.length - length));
  return source.slice(start, start + length);
}

/** A nested record with string leaves. */
export interface NestedRecord {
  [key: string]: string | NestedRecord;
}

/**
 * AGL's `random_dict(depth=(1, 3), breadth=(2, 6), key_length=(3, 20), value_length=(5, 300))`: the depth is drawn
 * once per dict; every node has `randint(breadth)` keys; nodes above the drawn depth hold dicts, the last level holds
 * string values.
 */
export function randomDict(random: Random = Math.random): NestedRecord {
  const depth = randInt(ATTRIBUTE_RANGES.depth[0], ATTRIBUTE_RANGES.depth[1], random);
  const level = (remaining: number): NestedRecord => {
    const out: NestedRecord = {};
    const breadth = randInt(ATTRIBUTE_RANGES.breadth[0], ATTRIBUTE_RANGES.breadth[1], random);
    for (let i = 0; i < breadth; i += 1) {
      const key = randomString(randInt(ATTRIBUTE_RANGES.keyLength[0], ATTRIBUTE_RANGES.keyLength[1], random), random);
      out[key] =
        remaining > 1
          ? level(remaining - 1)
          : randomString(randInt(ATTRIBUTE_RANGES.valueLength[0], ATTRIBUTE_RANGES.valueLength[1], random), random);
    }
    return out;
  };
  return level(depth);
}

/** AGL's `flatten_dict`: nested keys joined with `.`. */
export function flattenDict(value: NestedRecord, prefix = '', out: FlatAttributes = {}): FlatAttributes {
  for (const [key, child] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof child === 'string') out[path] = child;
    else flattenDict(child, path, out);
  }
  return out;
}

/**
 * One span's worth of random attributes (AGL's `generate_attributes()`): `flattenDict(randomDict(random))`, built
 * flat in one pass with the same draws in the same order (so the same output for the same `random`), into a
 * dictionary-mode object. Building the nested dict first and copying it, with a new hidden class per random key,
 * cost three times as much and made the benchmark's own runners a bottleneck of the large scenario.
 */
export function generateAttributes(random: Random = Math.random): FlatAttributes {
  const out = Object.create(null) as FlatAttributes;
  const { depth, breadth, keyLength, valueLength } = ATTRIBUTE_RANGES;
  const level = (prefix: string, remaining: number): void => {
    const keys = randInt(breadth[0], breadth[1], random);
    for (let i = 0; i < keys; i += 1) {
      const key = randomString(randInt(keyLength[0], keyLength[1], random), random);
      const path = prefix === '' ? key : `${prefix}.${key}`;
      if (remaining > 1) level(path, remaining - 1);
      else out[path] = randomString(randInt(valueLength[0], valueLength[1], random), random);
    }
  };
  level('', randInt(depth[0], depth[1], random));
  return out;
}
