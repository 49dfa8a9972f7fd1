import { rewardInfos, trafficKeysOf, type TrafficKeys, type TrafficRewardInfo } from '../../engine/traffic-rewards';
import { TRAFFIC_HOUR, type TrafficGroupRow, type TrafficRewardRow, type TrafficRows } from '../../engine/traffic-rows';
import { PRODUCTION_SOURCES, type TrafficFilter } from './ext-traffic-filter';

export { rewardInfos, type TrafficKeys, type TrafficRewardInfo };

/** Which rollouts the view counts: production sources only, or every rollout. */
export type TrafficScope = 'production' | 'all';

/** One bucket of the answer, before it goes on the wire. */
export interface TrafficBucket {
  start: number;
  count: number;
  failed: number;
  withFeedback: number;
  feedbackCount: number;
  rewarded: number;
  rewardSum: number;
}

/** What the aggregation needs besides the rows. */
export interface TrafficAggregateOptions {
  filter: TrafficFilter;
  scope: TrafficScope;
  /** The mode check of the request (`modeSelection(...).matches`). */
  modeMatches: (mode: string | null) => boolean;
  since: number;
  until: number;
  bucketSeconds: number;
}

/** The answer's buckets and totals, and the sources and agents of the window (mode filter only, for the menus). */
export interface TrafficAggregate {
  buckets: TrafficBucket[];
  total: TrafficBucket;
  sources: string[];
  agents: string[];
  /** Start of the earliest hour holding a matching rollout, or null. */
  earliest: number | null;
}

function emptyBucket(start: number): TrafficBucket {
  return { start, count: 0, failed: 0, withFeedback: 0, feedbackCount: 0, rewarded: 0, rewardSum: 0 };
}

/** Whether a rollout's keys pass the scope, mode, source and agent of the request. */
function keysMatch(o: TrafficAggregateOptions, k: TrafficKeys): boolean {
  if (!o.modeMatches(k.mode)) return false;
  if (o.scope === 'production' && (k.source === null || !PRODUCTION_SOURCES.includes(k.source))) return false;
  if (o.filter.source !== null && k.source !== o.filter.source) return false;
  if (o.filter.agent !== null && k.agent !== o.filter.agent) return false;
  return true;
}

/** Whether a rollout's reward and feedback pass the request's feedback and reward filters. */
function rewardMatches(f: TrafficFilter, r: TrafficRewardInfo): boolean {
  if (f.feedback === 'with' && r.feedbackCount === 0) return false;
  if (f.feedback === 'without' && r.feedbackCount > 0) return false;
  if (f.minReward !== null && (r.finalReward === null || r.finalReward < f.minReward)) return false;
  if (f.maxReward !== null && (r.finalReward === null || r.finalReward > f.maxReward)) return false;
  return true;
}

/**
 * Buckets of a window from the hourly counts, the reward rollup's sums (`rewards`: only for requests without reward or
 * feedback filters) and the rewarded rollouts. Counts come from the hourly groups unless the
 * request filters on feedback or reward, which only rollouts with annotation spans can pass (`feedback=without`: the
 * counts less the rollouts with feedback).
 */
export function aggregateTraffic(
  groups: readonly TrafficGroupRow[],
  infos: readonly TrafficRewardInfo[],
  o: TrafficAggregateOptions,
  rewards: readonly TrafficRewardRow[] = [],
): TrafficAggregate {
  const size = o.bucketSeconds;
  const first = Math.floor(o.since / size) * size;
  const n = Math.max(0, Math.ceil((o.until - first) / size));
  const buckets = Array.from({ length: n }, (_, i) => emptyBucket(first + i * size));
  const total = emptyBucket(first);
  const bucketOf = (time: number): TrafficBucket | undefined => buckets[Math.floor((time - first) / size)];
  const sources = new Set<string>();
  const agents = new Set<string>();
  let earliest: number | null = null;
  const rewardOnly = o.filter.minReward !== null || o.filter.maxReward !== null || o.filter.feedback === 'with';
  for (const g of groups) {
    const k = trafficKeysOf(g);
    if (o.modeMatches(k.mode)) {
      if (k.source !== null) sources.add(k.source);
      if (k.agent !== null) agents.add(k.agent);
    }
    if (!keysMatch(o, k) || g.n <= 0) continue;
    const start = g.hour * TRAFFIC_HOUR;
    if (earliest === null || start < earliest) earliest = start;
    if (rewardOnly) continue;
    const b = bucketOf(Math.max(start, first));
    if (b === undefined) continue;
    for (const acc of [b, total]) {
      acc.count += g.n;
      if (k.failed) acc.failed += g.n;
    }
  }
  for (const r of rewards) {
    const b = bucketOf(r.hour * TRAFFIC_HOUR);
    if (b === undefined || !keysMatch(o, trafficKeysOf(r))) continue;
    for (const acc of [b, total]) {
      acc.withFeedback += r.with_feedback;
      acc.feedbackCount += r.feedback_count;
      acc.rewarded += r.rewarded;
      acc.rewardSum += r.reward_sum;
    }
  }
  for (const r of infos) {
    if (!keysMatch(o, r)) continue;
    const b = bucketOf(r.startTime);
    if (b === undefined) continue;
    const passes = rewardMatches(o.filter, r);
    for (const acc of [b, total]) {
      if (!passes) {
        // Counted by the groups, but filtered out by feedback=without: take it back.
        if (!rewardOnly && o.filter.feedback === 'without') {
          acc.count -= 1;
          if (r.failed) acc.failed -= 1;
        }
        continue;
      }
      if (rewardOnly) {
        acc.count += 1;
        if (r.failed) acc.failed += 1;
      }
      if (r.feedbackCount > 0) acc.withFeedback += 1;
      acc.feedbackCount += r.feedbackCount;
      if (r.finalReward !== null) {
        acc.rewarded += 1;
        acc.rewardSum += r.finalReward;
      }
    }
  }
  return { buckets, total, sources: [...sources].sort(), agents: [...agents].sort(), earliest };
}

/** {@link aggregateTraffic} of a storage's {@link TrafficRows}. */
export function aggregateTrafficRows(rows: TrafficRows, o: TrafficAggregateOptions): TrafficAggregate {
  return aggregateTraffic(rows.groups, rewardInfos(rows.annotations), o, rows.rewards);
}
