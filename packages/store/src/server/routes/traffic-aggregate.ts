import { getRewardSource, getRewardValue, type RewardSource, type SpanLike } from '@agl/core/transitions';
import { ATTR_REWARD_SOURCE, REWARD_SOURCES, SPAN_ANNOTATION } from '@agl/core/semconv';
import {
  decodeTrafficKey,
  TRAFFIC_HOUR,
  type TrafficAnnotationRow,
  type TrafficGroupRow,
  type TrafficRows,
} from '../../engine/traffic-rows';
import { PRODUCTION_SOURCES, type TrafficFilter } from './ext-traffic-filter';

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

/** The keys of a rollout the view filters on (decoded). */
export interface TrafficKeys {
  mode: string | null;
  source: string | null;
  agent: string | null;
  failed: boolean;
}

/** One rollout that has annotation spans: its reward and feedback as the summaries read them. */
export interface TrafficRewardInfo extends TrafficKeys {
  startTime: number;
  finalReward: number | null;
  feedbackCount: number;
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

const keysOf = (row: TrafficGroupRow | TrafficAnnotationRow): TrafficKeys => ({
  mode: row.mode === '' ? null : row.mode,
  source: decodeTrafficKey(row.source),
  agent: decodeTrafficKey(row.agent),
  failed: row.failed === true || row.failed === 1,
});

/** The primary reward key every AGL emitter writes (`agentlightning.reward.0.value`). */
const PRIMARY_REWARD = 'agentlightning.reward.0.value';

/**
 * The reward and its source of one annotation row: the common layout (a finite number at
 * `agentlightning.reward.0.value`, precomputed by SQLite as `reward`/`reward_source`) is read directly; any other
 * layout goes through `getRewardValue` / `getRewardSource`, so the answer is theirs either way.
 */
function rewardOfRow(row: TrafficAnnotationRow): { value: number | null; source: RewardSource } {
  if (row.attributes === null && typeof row.reward === 'number')
    return { value: row.reward, source: sourceOf(row.reward_source ?? null) };
  const attributes =
    row.attributes === null
      ? {}
      : typeof row.attributes === 'string'
        ? (JSON.parse(row.attributes) as Record<string, unknown>)
        : row.attributes;
  const primary = attributes[PRIMARY_REWARD];
  if (typeof primary === 'number' && Number.isFinite(primary))
    return { value: primary, source: sourceOf(attributes[ATTR_REWARD_SOURCE]) };
  const span: SpanLike = { name: SPAN_ANNOTATION, attributes, sequenceId: row.sequence_id };
  return { value: getRewardValue(span), source: getRewardSource(span) };
}

const sourceOf = (value: unknown): RewardSource =>
  value === REWARD_SOURCES.feedback || value === REWARD_SOURCES.judge ? value : 'agent';

/**
 * Final reward and feedback count of each rollout among the annotation rows, with the precedence of
 * `findFinalReward` (spans by sequence id: the latest feedback, else the latest agent reward, else the latest judge
 * score) and the count of `listFeedback` (feedback spans with a primary reward).
 */
export function rewardInfos(annotations: readonly TrafficAnnotationRow[]): TrafficRewardInfo[] {
  const byRollout = new Map<string, TrafficAnnotationRow[]>();
  for (const row of annotations) {
    const list = byRollout.get(row.rollout_id);
    if (list) list.push(row);
    else byRollout.set(row.rollout_id, [row]);
  }
  const out: TrafficRewardInfo[] = [];
  for (const rows of byRollout.values()) {
    if (rows.length > 1) rows.sort((a, b) => a.sequence_id - b.sequence_id);
    let feedback: number | null = null;
    let agent: number | null = null;
    let judge: number | null = null;
    let feedbackCount = 0;
    for (let i = rows.length - 1; i >= 0; i -= 1) {
      const { value, source } = rewardOfRow(rows[i]!);
      if (value === null) continue;
      if (source === 'feedback') {
        feedbackCount += 1;
        feedback ??= value;
      } else if (source === 'agent') agent ??= value;
      else judge ??= value;
    }
    out.push({
      ...keysOf(rows[0]!),
      startTime: rows[0]!.start_time,
      finalReward: feedback ?? agent ?? judge,
      feedbackCount,
    });
  }
  return out;
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
 * Buckets of a window from the hourly counts and the rewarded rollouts. Counts come from the hourly groups unless the
 * request filters on feedback or reward, which only rollouts with annotation spans can pass (`feedback=without`: the
 * counts less the rollouts with feedback).
 */
export function aggregateTraffic(
  groups: readonly TrafficGroupRow[],
  infos: readonly TrafficRewardInfo[],
  o: TrafficAggregateOptions,
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
    const k = keysOf(g);
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
  return aggregateTraffic(rows.groups, rewardInfos(rows.annotations), o);
}
