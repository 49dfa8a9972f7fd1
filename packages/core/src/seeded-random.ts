/**
 * A small seeded pseudo-random generator (mulberry32): floats in [0, 1), the same sequence for the same 32-bit seed on
 * every platform. For reproducible sampling, fixtures and benchmarks; never for anything that must be unpredictable.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
