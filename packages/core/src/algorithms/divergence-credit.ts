import type { TrainingSample } from './training-sample';

/**
 * How the negative advantage of a worse-than-average sample is spread over its response (`AdvantageConfig`):
 * - `whole-response`: every trained token carries it (GRPO's default);
 * - `first-divergence`: see {@link firstDivergenceCredit}.
 */
export type NegativeCredit = (typeof NEGATIVE_CREDITS)[number];

/** Every {@link NegativeCredit}, for validating a value that came from outside (a CLI flag, a config file). */
export const NEGATIVE_CREDITS = ['whole-response', 'first-divergence'] as const;

/**
 * Narrows the blame of worse-than-average samples to where they went wrong. For each sample with a negative advantage
 * whose group holds a better-rewarded sample with the same prompt, the sample's trained tokens after its first
 * divergence from the better sample it shares the longest prefix with are masked out. The divergence is the first
 * trained token at or after the first token that differs (observation tokens that differ, such as a tool result of
 * an earlier differing call, pass the blame on to the next token the policy produced).
 *
 * Why: the tokens before the divergence are what the better sample produced too (the better sample's positive
 * advantage and this one's negative advantage meet there as GRPO intends), and the tokens after it were produced in a
 * context the mistake had already spoiled, such as a faithful copy of a wrong tool result, which whole-response
 * credit would push down. Samples with a positive or zero advantage, and those with no better sample sharing their
 * prompt, are returned as they are. Pure: a changed sample is a new object with a new `responseMask`.
 */
export function firstDivergenceCredit(samples: readonly TrainingSample[]): TrainingSample[] {
  const groups = new Map<string, TrainingSample[]>();
  for (const s of samples) {
    const group = groups.get(s.groupId);
    if (group) group.push(s);
    else groups.set(s.groupId, [s]);
  }
  return samples.map((s) => {
    if (!(s.advantage < 0)) return s;
    let shared = -1;
    for (const other of groups.get(s.groupId)!) {
      if (other.reward > s.reward && sameTokens(other.promptTokenIds, s.promptTokenIds)) {
        shared = Math.max(shared, commonPrefix(other.responseTokenIds, s.responseTokenIds));
      }
    }
    if (shared < 0) return s;
    let blamed = shared;
    while (blamed < s.responseMask.length && s.responseMask[blamed] === 0) blamed += 1;
    if (blamed >= s.responseMask.length - 1) return s;
    return { ...s, responseMask: s.responseMask.map((m, i) => (i <= blamed ? m : 0)) };
  });
}

function sameTokens(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && commonPrefix(a, b) === a.length;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i += 1;
  return i;
}
