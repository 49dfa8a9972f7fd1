import { groupIndices, mean, type GroupedScores } from './grouped-scores';

/**
 * RLOO (REINFORCE leave-one-out) advantages (verl's `compute_rloo_outcome_advantage`): within a group of n > 1,
 * `A_i = s_i − mean(s_j, j ≠ i) = n/(n−1)·(s_i − mean)`. A group of one keeps its score as its advantage.
 */
export function rlooAdvantages(options: GroupedScores): number[] {
  const { scores } = options;
  const out = new Array<number>(scores.length).fill(0);
  for (const indices of groupIndices(options).values()) {
    const n = indices.length;
    const values = indices.map((i) => scores[i] as number);
    const m = n > 1 ? mean(values) : 0;
    for (const i of indices) {
      const s = scores[i] as number;
      out[i] = n > 1 ? (s * n) / (n - 1) - (m * n) / (n - 1) : s;
    }
  }
  return out;
}
