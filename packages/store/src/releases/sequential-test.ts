/**
 * The always-valid sequential test behind release decisions: the mixture sequential probability ratio test (mSPRT)
 * of Johari, Pekelis and Walsh ("Always valid inference", 2017) for the difference of two means, with a normal
 * mixing distribution N(0, τ²) and the normal approximation of the difference. Its confidence sequence holds at every
 * sample size at once (Ville's inequality), so the store may look after every batch and still make a false decision
 * with probability at most `alpha`.
 */

/** Summary of one sample: count, mean and (unbiased) variance of the observations. */
export interface SampleSummary {
  n: number;
  mean: number;
  variance: number;
}

/** An always-valid interval of `candidate − baseline` (or null when a side has too few observations). */
export interface DifferenceInterval {
  /** Point estimate of the difference. */
  estimate: number;
  low: number;
  high: number;
  /** The variance of the estimate used. */
  variance: number;
}

/** Fewest observations per side before an interval is given (the normal approximation needs a few). */
export const MIN_OBSERVATIONS = 10;
/** τ, the mixing scale, as a share of the pooled standard deviation: tuned for effects of about a quarter SD. */
const TAU_PER_SD = 0.25;
/**
 * Smallest per-observation variance used: a metric with no spread at all (a judge that gives every answer of an arm
 * the same score) still yields an interval, and a clear difference a decision.
 */
const MIN_VARIANCE = 1e-4;

/** Count, mean and unbiased variance of `values`. */
export function summarize(values: readonly number[]): SampleSummary {
  const n = values.length;
  if (n === 0) return { n: 0, mean: 0, variance: 0 };
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / n;
  let ss = 0;
  for (const v of values) ss += (v - mean) ** 2;
  return { n, mean, variance: n > 1 ? ss / (n - 1) : 0 };
}

/**
 * A Bernoulli sample (`successes` of `n`) as a {@link SampleSummary}; the variance uses the Laplace estimate
 * `(x + 1) / (n + 2)`, so a sample with no events yet still has a positive variance.
 */
export function bernoulli(successes: number, n: number): SampleSummary {
  const smoothed = (successes + 1) / (n + 2);
  return { n, mean: n === 0 ? 0 : successes / n, variance: smoothed * (1 - smoothed) };
}

/**
 * The mSPRT confidence sequence of `candidate.mean − baseline.mean` at level `1 − alpha`. `baseline` may be a constant
 * (`n: Infinity`, variance 0) to compare one sample with a fixed limit. Null while a side has fewer than
 * {@link MIN_OBSERVATIONS} observations.
 *
 * With V the variance of the estimate and τ² the mixing variance, the mixture likelihood ratio of θ₀ is
 * `sqrt(V / (V + τ²)) · exp(τ² (θ̂ − θ₀)² / (2 V (V + τ²)))`; the θ₀ it keeps below `1/alpha` form the interval
 * `θ̂ ± sqrt(V (V + τ²) / τ² · (2 ln(1/alpha) + ln((V + τ²) / V)))`.
 */
export function differenceInterval(
  candidate: SampleSummary,
  baseline: SampleSummary,
  alpha: number,
): DifferenceInterval | null {
  if (candidate.n < MIN_OBSERVATIONS || baseline.n < MIN_OBSERVATIONS) return null;
  const sc = Math.max(candidate.variance, MIN_VARIANCE);
  const sb = Number.isFinite(baseline.n) ? Math.max(baseline.variance, MIN_VARIANCE) : 0;
  const vc = sc / candidate.n;
  const vb = Number.isFinite(baseline.n) ? sb / baseline.n : 0;
  const variance = vc + vb;
  if (!(variance > 0)) return null;
  const pooledSd = Math.sqrt(Number.isFinite(baseline.n) ? (sc + sb) / 2 : sc);
  const tau2 = (TAU_PER_SD * pooledSd) ** 2;
  if (!(tau2 > 0)) return null;
  const half = Math.sqrt(
    ((variance * (variance + tau2)) / tau2) * (2 * Math.log(1 / alpha) + Math.log((variance + tau2) / variance)),
  );
  const estimate = candidate.mean - baseline.mean;
  return { estimate, low: estimate - half, high: estimate + half, variance };
}

/** A fixed-sample 95% normal interval of a mean (for display next to each arm), or nulls with under 2 values. */
export function meanInterval(sample: SampleSummary): { low: number | null; high: number | null } {
  if (sample.n < 2) return { low: null, high: null };
  const half = 1.96 * Math.sqrt(sample.variance / sample.n);
  return { low: sample.mean - half, high: sample.mean + half };
}

/** The `q` quantile (0..1) of `values` (nearest rank), or null when empty. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}
