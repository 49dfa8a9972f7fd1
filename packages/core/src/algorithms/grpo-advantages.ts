import { groupIndices, mean, sampleStd, type GroupedScores } from './grouped-scores';

/** Options of {@link grpoAdvantages}. */
export interface GrpoAdvantagesOptions extends GroupedScores {
  /** Divide by the group's standard deviation (verl's `norm_adv_by_std_in_grpo`). Default true. */
  normalizeByStd?: boolean;
  /** Added to the standard deviation. Default 1e-6 (verl's value). */
  epsilon?: number;
}

/**
 * GRPO outcome advantages (verl's `compute_grpo_outcome_advantage`): within each group,
 * `A_i = (s_i − mean) / (std + ε)`, or `s_i − mean` when `normalizeByStd` is false. `std` is the sample standard
 * deviation (n − 1, as `torch.std`). A group of one has mean 0 and std 1, so its advantage is its score / (1 + ε).
 */
export function grpoAdvantages(options: GrpoAdvantagesOptions): number[] {
  const { scores, normalizeByStd = true, epsilon = 1e-6 } = options;
  const out = new Array<number>(scores.length).fill(0);
  for (const indices of groupIndices(options).values()) {
    const values = indices.map((i) => scores[i] as number);
    const single = values.length === 1;
    const m = single ? 0 : mean(values);
    const s = single ? 1 : sampleStd(values);
    for (const i of indices) {
      const centred = (scores[i] as number) - m;
      out[i] = normalizeByStd ? centred / (s + epsilon) : centred;
    }
  }
  return out;
}
