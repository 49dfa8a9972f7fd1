import {
  parseReleaseGuard,
  type JsonObject,
  type Release,
  type ReleaseArmFigures,
  type ReleaseDecision,
  type ReleaseGuard,
} from '@agl/core/schema';
import {
  bernoulli,
  differenceInterval,
  meanInterval,
  quantile,
  summarize,
  type DifferenceInterval,
} from './sequential-test';

/** What one arm's finished requests showed, one entry per request (the evaluator reads them from the store). */
export interface ArmData {
  /** Finished requests: whether each failed, its duration (s), its start time (epoch s). */
  requests: ReadonlyArray<{ failed: boolean; durationSeconds: number; startTime: number }>;
  /** The metric value of each request that has one. */
  metric: readonly number[];
  /** Tokens per request (only read when a tokens guard is set). */
  tokens: readonly number[];
}

/** What an evaluation concluded: the arms' figures and, when something changed, the decision. */
export interface ReleaseVerdict {
  arms: { baseline: ReleaseArmFigures; candidate: ReleaseArmFigures };
  decision: Omit<ReleaseDecision, 'time' | 'by'> | null;
}

const round = (x: number | null, digits = 6): number | null =>
  x === null || !Number.isFinite(x) ? x : Math.round(x * 10 ** digits) / 10 ** digits;

function interval(i: DifferenceInterval | null): JsonObject | null {
  return i ? { estimate: round(i.estimate), low: round(i.low), high: round(i.high) } : null;
}

function armFigures(resourcesId: string, data: ArmData, stageStart: number): ReleaseArmFigures {
  const failures = data.requests.filter((r) => r.failed).length;
  const n = data.requests.length;
  const metric = summarize(data.metric);
  const ci = meanInterval(metric);
  const tokens = summarize(data.tokens);
  return {
    resourcesId,
    requests: n,
    stageRequests: data.requests.filter((r) => r.startTime >= stageStart).length,
    failures,
    failureRate: n === 0 ? null : round(failures / n),
    metricCount: metric.n,
    metricMean: metric.n === 0 ? null : round(metric.mean),
    metricLow: round(ci.low),
    metricHigh: round(ci.high),
    latencyP95Seconds: round(
      quantile(
        data.requests.map((r) => r.durationSeconds),
        0.95,
      ),
    ),
    tokensMean: tokens.n === 0 ? null : round(tokens.mean),
  };
}

/** A guard's test: the interval of the candidate's excess and whether it is worse with confidence. */
function guardTest(
  guard: ReleaseGuard,
  baseline: ArmData,
  candidate: ArmData,
  alpha: number,
  baselineP95: number | null,
): { worse: boolean; figures: JsonObject } {
  if (guard.kind === 'failure-rate') {
    const b = bernoulli(baseline.requests.filter((r) => r.failed).length, baseline.requests.length);
    const c = bernoulli(candidate.requests.filter((r) => r.failed).length, candidate.requests.length);
    const i = differenceInterval(c, b, alpha);
    const limit = guard.relative ? guard.limit * b.mean : guard.limit;
    return {
      worse: i !== null && i.low > limit,
      figures: { guard: guard.text, difference: interval(i), limit: round(limit) },
    };
  }
  if (guard.kind === 'latency-p95') {
    // The candidate's p95 is above (1 + limit) × the baseline's p95 exactly when more than 5% of its requests take
    // longer than that: a test of the candidate's share of such requests against 5%.
    const p95 = baselineP95;
    if (p95 === null || baseline.requests.length < 20)
      return { worse: false, figures: { guard: guard.text, difference: null } };
    const threshold = guard.relative ? p95 * (1 + guard.limit) : p95 + guard.limit;
    const over = candidate.requests.filter((r) => r.durationSeconds > threshold).length;
    const i = differenceInterval(
      bernoulli(over, candidate.requests.length),
      { n: Infinity, mean: 0.05, variance: 0 },
      alpha,
    );
    return {
      worse: i !== null && i.low > 0,
      figures: { guard: guard.text, threshold_seconds: round(threshold), share_over: interval(i) },
    };
  }
  const b = summarize(baseline.tokens);
  const c = summarize(candidate.tokens);
  const i = differenceInterval(c, b, alpha);
  const limit = guard.relative ? guard.limit * b.mean : guard.limit;
  return {
    worse: i !== null && i.low > limit,
    figures: { guard: guard.text, difference: interval(i), limit: round(limit) },
  };
}

/**
 * Decides a running release from its arms' data (pure; the store runs it after each batch of results):
 * 1. roll back when a guard is worse with confidence (its always-valid interval lies past the limit), or the metric
 *    is (the interval of candidate − baseline lies below 0);
 * 2. roll back when `maxDurationSeconds` has passed before the schedule ended;
 * 3. otherwise, once the candidate has `minRequests` finished requests at the current share: ramp to the next share,
 *    or, at the last share, promote (`better` when the metric's interval lies above 0, else `not worse`).
 * Every test runs at the release's `alpha` (its false-positive rate over the whole release, peeking included).
 */
export function decideRelease(release: Release, baseline: ArmData, candidate: ArmData, now: number): ReleaseVerdict {
  const arms = {
    baseline: armFigures(release.baseline, baseline, release.stageStartTime),
    candidate: armFigures(release.candidate, candidate, release.stageStartTime),
  };
  if (release.state !== 'running') return { arms, decision: null };
  const metricInterval = differenceInterval(summarize(candidate.metric), summarize(baseline.metric), release.alpha);
  const guards = release.guards.flatMap((text) => {
    const guard = parseReleaseGuard(text);
    return typeof guard === 'string'
      ? []
      : [{ guard, ...guardTest(guard, baseline, candidate, release.alpha, arms.baseline.latencyP95Seconds) }];
  });
  const figures: JsonObject = {
    alpha: release.alpha,
    test: 'mSPRT (normal mixture), always-valid interval of candidate − baseline',
    metric: release.metric,
    metric_difference: interval(metricInterval),
    guards: guards.map((g) => ({ ...g.figures, worse: g.worse })),
    baseline_requests: arms.baseline.requests,
    candidate_requests: arms.candidate.requests,
    candidate_stage_requests: arms.candidate.stageRequests,
    baseline_metric_mean: arms.baseline.metricMean,
    candidate_metric_mean: arms.candidate.metricMean,
    baseline_failure_rate: arms.baseline.failureRate,
    candidate_failure_rate: arms.candidate.failureRate,
  };
  const worseGuard = guards.find((g) => g.worse);
  if (worseGuard) {
    return {
      arms,
      decision: {
        action: 'rollback',
        share: 0,
        reason: `guard ${worseGuard.guard.text} is worse with confidence`,
        figures,
      },
    };
  }
  if (metricInterval && metricInterval.high < 0) {
    return {
      arms,
      decision: { action: 'rollback', share: 0, reason: `metric ${release.metric} is worse with confidence`, figures },
    };
  }
  if (release.maxDurationSeconds !== null && now - release.createTime >= release.maxDurationSeconds) {
    return {
      arms,
      decision: {
        action: 'rollback',
        share: 0,
        reason: `max duration (${release.maxDurationSeconds} s) reached before the schedule ended`,
        figures,
      },
    };
  }
  if (arms.candidate.stageRequests < release.minRequests) return { arms, decision: null };
  const next = release.shares[release.stage + 1];
  if (next !== undefined) {
    return {
      arms,
      decision: {
        action: 'ramp',
        share: next,
        reason: `not worse after ${arms.candidate.stageRequests} candidate requests at ${release.share}`,
        figures,
      },
    };
  }
  const better = metricInterval !== null && metricInterval.low > 0;
  return {
    arms,
    decision: {
      action: 'promote',
      share: 1,
      reason: better ? `metric ${release.metric} is better with confidence` : 'schedule complete, not worse',
      figures: { ...figures, verdict: better ? 'better' : 'not worse' },
    },
  };
}
