import { ValidationError } from '../errors/index';

/** Scores and their group keys, index-aligned. */
export interface GroupedScores {
  /** One scalar score (reward or return) per item. */
  scores: readonly number[];
  /** One group key per item (the task id). */
  groupIds: readonly string[];
}

/** Validates alignment and finiteness, then returns the item indices of each group in first-seen order. */
export function groupIndices(input: GroupedScores): Map<string, number[]> {
  if (input.scores.length !== input.groupIds.length) {
    throw new ValidationError(
      `scores and groupIds must have the same length, got ${input.scores.length} and ${input.groupIds.length}`,
      [{ path: 'groupIds', message: 'length differs from scores' }],
    );
  }
  const groups = new Map<string, number[]>();
  input.scores.forEach((score, i) => {
    if (!Number.isFinite(score)) {
      throw new ValidationError(`scores[${i}] must be a finite number, got ${score}; fill missing rewards first`, [
        { path: `scores.${i}`, message: 'must be finite' },
      ]);
    }
    const key = input.groupIds[i] as string;
    const list = groups.get(key);
    if (list) list.push(i);
    else groups.set(key, [i]);
  });
  return groups;
}

/** Arithmetic mean; 0 for an empty list. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** Standard deviation with Bessel's correction (n − 1), like `torch.std`; 0 for fewer than two values. */
export function sampleStd(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  let sq = 0;
  for (const v of values) sq += (v - m) * (v - m);
  return Math.sqrt(sq / (values.length - 1));
}

/** Population standard deviation (n); 0 for an empty list. */
export function populationStd(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const m = mean(values);
  let sq = 0;
  for (const v of values) sq += (v - m) * (v - m);
  return Math.sqrt(sq / values.length);
}
