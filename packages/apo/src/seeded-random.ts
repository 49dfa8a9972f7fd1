import { seededRandom } from '@agl/core';

/** Seeded draws, shuffles and samples over `seededRandom` (mulberry32): the same seed, the same choices everywhere. */
export class SeededRandom {
  /** A float in [0, 1). */
  readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A fresh 32-bit seed for a child generator. */
  fork(): SeededRandom {
    return new SeededRandom(Math.floor(this.next() * 4294967296));
  }

  /** A shuffled copy (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  /** `k` distinct items (all of them, shuffled, when `k ≥ length`). */
  sample<T>(items: readonly T[], k: number): T[] {
    return this.shuffle(items).slice(0, Math.max(0, k));
  }

  /** One item. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('SeededRandom.pick needs a non-empty list.');
    return items[this.int(items.length)] as T;
  }
}

/**
 * AGL 0.3 `batch_iter_over_dataset`: an endless stream of batches of `n` distinct items. When `n ≥ length` every batch
 * is the whole dataset, reshuffled; otherwise batches are cut from a permutation that is reshuffled when it runs out.
 */
export function* batchIterator<T>(items: readonly T[], n: number, random: SeededRandom): Generator<T[], never> {
  if (items.length === 0) throw new RangeError('batchIterator needs a non-empty dataset.');
  if (n >= items.length) {
    for (;;) yield random.shuffle(items);
  }
  let order = random.shuffle(items);
  let at = 0;
  for (;;) {
    if (at + n > order.length) {
      order = random.shuffle(items);
      at = 0;
    }
    yield order.slice(at, at + n);
    at += n;
  }
}
