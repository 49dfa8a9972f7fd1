import { z } from 'zod';
import { JsonObject } from './json';

/**
 * Releases (Contract 4c): a candidate resources version meets a share of live traffic next to the baseline, and the
 * store promotes it or rolls it back from recorded results. Browser-safe (the dashboard reads these types).
 */

/** `running` until the store (or a user) ends it: `promoted`, `rolled_back` or `aborted`. */
export const ReleaseState = z.enum(['running', 'promoted', 'rolled_back', 'aborted']);
/** @see {@link ReleaseState} */
export type ReleaseState = z.infer<typeof ReleaseState>;

/** Which resources served a request of a release. */
export const ReleaseArm = z.enum(['baseline', 'candidate']);
/** @see {@link ReleaseArm} */
export type ReleaseArm = z.infer<typeof ReleaseArm>;

/** Default share schedule: 1% → 10% → 50% → 100%. */
export const DEFAULT_RELEASE_SHARES: readonly number[] = [0.01, 0.1, 0.5, 1];
/** Default guards: the failure rate may rise 2 points, the latency p95 20%. */
export const DEFAULT_RELEASE_GUARDS: readonly string[] = ['failure-rate:+0.02', 'latency-p95:+20%'];
/** Default metric: users' feedback reward. */
export const DEFAULT_RELEASE_METRIC = 'feedback';
/** Default minimum candidate requests at each share before a ramp. */
export const DEFAULT_RELEASE_MIN_REQUESTS = 100;
/** Default false-positive rate of the sequential test. */
export const DEFAULT_RELEASE_ALPHA = 0.05;

/** Rollout metadata keys a release's requests carry (so `agl dataset build --release <id> --arm <arm>` finds them). */
export const RELEASE_METADATA = {
  releaseId: 'release_id',
  arm: 'release_arm',
  resourcesVersion: 'resources_version',
} as const;

/** One decision of a release, with the numbers it was taken on. */
export const ReleaseDecision = z.object({
  /** Epoch seconds. */
  time: z.number(),
  action: z.enum(['start', 'ramp', 'promote', 'rollback', 'abort']),
  /** The candidate's share after the decision. */
  share: z.number(),
  /** Why, in words (which test, which guard). */
  reason: z.string(),
  /** `automatic` (the store's test) or `manual` (promote / abort by a user). */
  by: z.enum(['automatic', 'manual']),
  /** The figures the decision was taken on (arm counts, means, the always-valid intervals). */
  figures: JsonObject.default({}),
});
/** @see {@link ReleaseDecision} */
export type ReleaseDecision = z.infer<typeof ReleaseDecision>;

/** What one arm's recorded requests show. */
export const ReleaseArmFigures = z.object({
  resourcesId: z.string(),
  /** Finished requests since the release started. */
  requests: z.number(),
  /** Finished requests since the current share started. */
  stageRequests: z.number(),
  failures: z.number(),
  failureRate: z.number().nullable(),
  /** Requests with a metric value, their mean and a 95% interval of the mean. */
  metricCount: z.number(),
  metricMean: z.number().nullable(),
  metricLow: z.number().nullable(),
  metricHigh: z.number().nullable(),
  latencyP95Seconds: z.number().nullable(),
  tokensMean: z.number().nullable(),
});
/** @see {@link ReleaseArmFigures} */
export type ReleaseArmFigures = z.infer<typeof ReleaseArmFigures>;

/** A release as stored. */
export const Release = z.object({
  releaseId: z.string().min(1),
  state: ReleaseState,
  baseline: z.string().min(1),
  candidate: z.string().min(1),
  /** The share schedule, increasing, ending at 1. */
  shares: z.array(z.number()),
  /** Index of the current share in `shares`. */
  stage: z.number().int(),
  /** The candidate's current share of requests (0 once the release ended other than promoted). */
  share: z.number(),
  metric: z.string(),
  guards: z.array(z.string()),
  minRequests: z.number().int(),
  maxDurationSeconds: z.number().nullable(),
  alpha: z.number(),
  createTime: z.number(),
  updateTime: z.number(),
  endTime: z.number().nullable(),
  stageStartTime: z.number(),
  shareHistory: z.array(z.object({ time: z.number(), share: z.number() })),
  arms: z.object({ baseline: ReleaseArmFigures, candidate: ReleaseArmFigures }).nullable(),
  decisions: z.array(ReleaseDecision),
});
/** @see {@link Release} */
export type Release = z.infer<typeof Release>;

/** What a service needs to assign arms: the running release (if any) with both arms' resources. */
export interface ReleaseSnapshot {
  releaseId: string;
  share: number;
  baseline: string;
  candidate: string;
}

/** A parsed guard: `failure-rate:+0.02` (absolute), `latency-p95:+20%` or `tokens:+10%` (relative to the baseline). */
export interface ReleaseGuard {
  kind: 'failure-rate' | 'latency-p95' | 'tokens';
  /** The allowed rise: absolute (`+0.02`), or a fraction of the baseline's figure when `relative`. */
  limit: number;
  relative: boolean;
  text: string;
}

/** Why a release setting is refused: the field and the fix (the store and the CLI turn it into a 400 / exit 2). */
export function releaseSettingProblem(settings: {
  shares?: readonly number[];
  metric?: string;
  guards?: readonly string[];
  minRequests?: number;
  maxDurationSeconds?: number | null;
  alpha?: number;
}): { field: string; message: string } | null {
  const { shares, metric, guards, minRequests, maxDurationSeconds, alpha } = settings;
  if (shares !== undefined) {
    const bad = shares.find((s) => !Number.isFinite(s) || s <= 0 || s > 1);
    if (shares.length === 0 || bad !== undefined)
      return {
        field: 'shares',
        message: `shares must be numbers in (0, 1], e.g. 0.01,0.1,0.5,1 (got ${shares.join(',')})`,
      };
    if (shares.some((s, i) => i > 0 && s <= shares[i - 1]!) || shares.at(-1) !== 1)
      return {
        field: 'shares',
        message: `shares must increase and end at 1, e.g. 0.01,0.1,0.5,1 (got ${shares.join(',')})`,
      };
  }
  if (metric !== undefined && !/^(feedback|judge:.+|[A-Za-z0-9_.:-]+)$/.test(metric))
    return {
      field: 'metric',
      message: `metric must be feedback, judge:<rubric> or a reward name (got ${JSON.stringify(metric)})`,
    };
  for (const guard of guards ?? []) {
    const problem = parseReleaseGuard(guard);
    if (typeof problem === 'string') return { field: 'guards', message: problem };
  }
  if (minRequests !== undefined && (!Number.isInteger(minRequests) || minRequests < 1))
    return { field: 'min_requests', message: `min requests must be a whole number ≥ 1 (got ${minRequests})` };
  if (maxDurationSeconds !== undefined && maxDurationSeconds !== null && !(maxDurationSeconds > 0))
    return { field: 'max_duration_seconds', message: `max duration must be > 0 seconds (got ${maxDurationSeconds})` };
  if (alpha !== undefined && !(alpha > 0 && alpha < 0.5))
    return { field: 'alpha', message: `alpha must be in (0, 0.5), e.g. 0.05 (got ${alpha})` };
  return null;
}

/** Parses a guard (`failure-rate:+0.02`, `latency-p95:+20%`, `tokens:+10%`); a string says what is wrong. */
export function parseReleaseGuard(text: string): ReleaseGuard | string {
  const match = /^(failure-rate|latency-p95|tokens):\+?(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  if (!match)
    return `guard ${JSON.stringify(text)} is not <failure-rate|latency-p95|tokens>:+<limit>[%], e.g. failure-rate:+0.02 or latency-p95:+20%`;
  const relative = match[3] === '%';
  const value = Number(match[2]);
  return { kind: match[1] as ReleaseGuard['kind'], limit: relative ? value / 100 : value, relative, text: text.trim() };
}

/**
 * The arm of a unit key: its stable position in [0, 1) (a hash of the release id and the key) below the candidate's
 * share gives `candidate`. Positions never move, so a key on the candidate stays there while the share grows.
 */
export function releaseArmFor(position: number, share: number): ReleaseArm {
  return position < share ? 'candidate' : 'baseline';
}

/** The JSON of a release over REST and in `agl release status --json`: `id`, `state`, `share`, `baseline`, ... */
export function releaseToWire(release: Release): JsonObject {
  const arm = (a: ReleaseArmFigures | undefined): JsonObject | null =>
    a
      ? {
          resources_id: a.resourcesId,
          requests: a.requests,
          stage_requests: a.stageRequests,
          failures: a.failures,
          failure_rate: a.failureRate,
          metric_count: a.metricCount,
          metric_mean: a.metricMean,
          metric_low: a.metricLow,
          metric_high: a.metricHigh,
          latency_p95_seconds: a.latencyP95Seconds,
          tokens_mean: a.tokensMean,
        }
      : null;
  return {
    id: release.releaseId,
    state: release.state,
    share: release.share,
    baseline: release.baseline,
    candidate: release.candidate,
    arms: { baseline: arm(release.arms?.baseline), candidate: arm(release.arms?.candidate) },
    decisions: release.decisions.map((d) => ({ ...d })),
    shares: [...release.shares],
    stage: release.stage,
    metric: release.metric,
    guards: [...release.guards],
    min_requests: release.minRequests,
    max_duration_seconds: release.maxDurationSeconds,
    alpha: release.alpha,
    create_time: release.createTime,
    update_time: release.updateTime,
    end_time: release.endTime,
    stage_start_time: release.stageStartTime,
    share_history: release.shareHistory.map((h) => ({ ...h })),
  };
}

/** A release back from its wire JSON ({@link releaseToWire}); a `ValidationError` names what does not fit. */
export function releaseFromWire(value: unknown): Release {
  const w = (value ?? {}) as Record<string, unknown>;
  const arm = (a: unknown): ReleaseArmFigures | null => {
    if (!a || typeof a !== 'object') return null;
    const x = a as Record<string, unknown>;
    return {
      resourcesId: x.resources_id as string,
      requests: x.requests as number,
      stageRequests: x.stage_requests as number,
      failures: x.failures as number,
      failureRate: x.failure_rate as number | null,
      metricCount: x.metric_count as number,
      metricMean: x.metric_mean as number | null,
      metricLow: x.metric_low as number | null,
      metricHigh: x.metric_high as number | null,
      latencyP95Seconds: x.latency_p95_seconds as number | null,
      tokensMean: x.tokens_mean as number | null,
    };
  };
  const arms = (w.arms ?? {}) as Record<string, unknown>;
  const baseline = arm(arms.baseline);
  const candidate = arm(arms.candidate);
  return Release.parse({
    releaseId: w.id,
    state: w.state,
    baseline: w.baseline,
    candidate: w.candidate,
    shares: w.shares,
    stage: w.stage,
    share: w.share,
    metric: w.metric,
    guards: w.guards,
    minRequests: w.min_requests,
    maxDurationSeconds: w.max_duration_seconds,
    alpha: w.alpha,
    createTime: w.create_time,
    updateTime: w.update_time,
    endTime: w.end_time,
    stageStartTime: w.stage_start_time,
    shareHistory: w.share_history,
    arms: baseline && candidate ? { baseline, candidate } : null,
    decisions: w.decisions,
  });
}
