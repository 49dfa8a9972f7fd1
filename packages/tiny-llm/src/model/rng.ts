import { seededRandom } from '@agl/core/random';

/** Seeded draws for weights and sampling over `seededRandom` (mulberry32). Same seed, same sequence, on every platform. */
export class SeededRng {
  /** A float in [0, 1). */
  readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(Math.floor(seed) ^ 0x9e3779b9);
  }

  /** A standard-normal sample (Box-Muller). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}
