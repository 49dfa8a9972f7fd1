import type { Rollout, Span } from '@agl/core/schema';
import { SPAN_ANNOTATION } from '@agl/core/semconv';

/**
 * What a storage answers for the dashboard's live-traffic view (`GET /v1/agl/ext/traffic`), aggregated where the data
 * lives: rollout counts per hour of start and per (mode, source, agent, failed), and the annotation spans (rewards,
 * feedback) of the latest attempt of the rollouts that have any, both only for the window asked. The route turns them
 * into buckets; the final reward keeps the precedence of `findFinalReward` because the route reads it from these spans.
 */

/** The window of a {@link TrafficRows} read, in epoch seconds (`since` inclusive, `until` exclusive). */
export interface TrafficRowsQuery {
  since: number;
  until: number;
  /**
   * Group the counts by buckets of this many seconds (a multiple of 3600, buckets aligned to the epoch) instead of by
   * hour; each group's `hour` is then the earliest hour of the bucket holding any of its rollouts. Default 3600.
   */
  bucketSeconds?: number;
  /** Only annotation rows of rollouts whose `metadata.source` is one of these (null or absent: any rollout). */
  sources?: readonly string[] | null;
  /** Leave out the counts (`groups` empty) or the annotation rows (`annotations` empty). */
  omit?: 'groups' | 'annotations';
  /**
   * Answer the reward sums of the window's whole hours from the reward rollup ({@link TrafficRows.rewards}, grouped by
   * bucket like the counts) and annotation rows only for the partial hours at either edge. Storages without a rollup
   * ignore it (all annotation rows, no `rewards`). Only for requests that filter on no reward or feedback.
   */
  rewardRollup?: boolean;
}

/**
 * Reward sums of the rollouts that started in one hour (or bucket: `hour` is then the earliest hour of the bucket
 * holding any) with one key, as {@link TrafficGroupRow} encodes keys: rollouts with feedback, feedback entries, rewarded
 * rollouts and the sum of their final rewards (the precedence of `findFinalReward`, latest attempt only).
 */
export interface TrafficRewardRow {
  hour: number;
  mode: string;
  source: string;
  agent: string;
  failed: number | boolean;
  with_feedback: number;
  feedback_count: number;
  rewarded: number;
  reward_sum: number;
}

/**
 * Rollouts that started in one hour with one key. Keys are encoded so they can sit in a SQL primary key: `mode` is `''`
 * for none; `source` and `agent` (`metadata.source`, `metadata.agent_name`) are `''` when not a string, else the value
 * after a `:` (see {@link decodeTrafficKey}).
 */
export interface TrafficGroupRow {
  /** `floor(startTime / 3600)`. */
  hour: number;
  mode: string;
  source: string;
  agent: string;
  /** 1 (or true) when the rollouts' status is `failed`. */
  failed: number | boolean;
  n: number;
}

/** One annotation span of the latest attempt of a rollout in the window, with the rollout's keys. */
export interface TrafficAnnotationRow {
  rollout_id: string;
  start_time: number;
  failed: number | boolean;
  mode: string;
  source: string;
  agent: string;
  sequence_id: number;
  /**
   * The span's attribute map, as JSON text or parsed (PostgreSQL's JSONB); SQLite leaves it null when it read the
   * common layout into {@link TrafficAnnotationRow.reward} and {@link TrafficAnnotationRow.reward_source}.
   */
  attributes: string | Record<string, unknown> | null;
  /** `agentlightning.reward.0.value` when it is a number (SQLite only). */
  reward?: number | null;
  /** `agl.reward.source` (SQLite only). */
  reward_source?: string | null;
}

/** {@link TrafficGroupRow}s and {@link TrafficAnnotationRow}s of one window. */
export interface TrafficRows {
  groups: TrafficGroupRow[];
  annotations: TrafficAnnotationRow[];
  /** With {@link TrafficRowsQuery.rewardRollup}, on storages that keep the rollup: the whole hours' reward sums. */
  rewards?: TrafficRewardRow[];
  /**
   * With {@link TrafficRowsQuery.rewardRollup}: the whole hours whose reward rollup a write made stale (their sums in
   * `rewards` are out of date; the caller recomputes them and reads again).
   */
  staleHours?: number[];
  /** Delta rows the counts of the whole hours summed on the way (PostgreSQL; the caller folds them past a bound). */
  deltaRows?: number;
}

/** Seconds per rollup hour. */
export const TRAFFIC_HOUR = 3600;

/** The value of an encoded key (`''` → null, `':x'` → `x`). */
export function decodeTrafficKey(key: string): string | null {
  return key === '' ? null : key.slice(1);
}

/** The encoded key of a metadata value (a string, or anything else). */
export function encodeTrafficKey(value: unknown): string {
  return typeof value === 'string' ? `:${value}` : '';
}

function metadataKey(rollout: Rollout, key: string): string {
  const metadata = rollout.metadata as Record<string, unknown> | null | undefined;
  return encodeTrafficKey(metadata && typeof metadata === 'object' ? metadata[key] : undefined);
}

/**
 * {@link TrafficRows} of rollouts held in process (the memory store): one pass over the rollouts, grouping those in the
 * window, and the annotation spans of the latest attempt of each of them.
 */
export function memoryTrafficRows(
  rollouts: Iterable<Rollout>,
  latestAttemptId: (rolloutId: string) => string | null,
  spansOf: (rolloutId: string) => Iterable<Span>,
  query: TrafficRowsQuery,
): TrafficRows {
  const groups = new Map<string, TrafficGroupRow>();
  const annotations: TrafficAnnotationRow[] = [];
  const size = query.bucketSeconds ?? TRAFFIC_HOUR;
  for (const r of rollouts) {
    if (!(r.startTime >= query.since && r.startTime < query.until)) continue;
    const hour = Math.floor(r.startTime / TRAFFIC_HOUR);
    const row = {
      hour,
      mode: r.mode ?? '',
      source: metadataKey(r, 'source'),
      agent: metadataKey(r, 'agent_name'),
      failed: r.status === 'failed' ? 1 : 0,
    };
    if (query.omit !== 'groups') {
      const key = `${Math.floor((hour * TRAFFIC_HOUR) / size)}|${row.mode}|${row.source}|${row.agent}|${row.failed}`;
      const group = groups.get(key);
      if (group) {
        group.n += 1;
        group.hour = Math.min(group.hour, hour);
      } else groups.set(key, { ...row, n: 1 });
    }
    if (query.omit === 'annotations') continue;
    if (query.sources && !query.sources.includes(decodeTrafficKey(row.source) ?? '')) continue;
    const attemptId = latestAttemptId(r.rolloutId);
    if (attemptId === null) continue;
    for (const span of spansOf(r.rolloutId)) {
      if (span.attemptId !== attemptId || span.name !== SPAN_ANNOTATION) continue;
      annotations.push({
        rollout_id: r.rolloutId,
        start_time: r.startTime,
        failed: row.failed,
        mode: row.mode,
        source: row.source,
        agent: row.agent,
        sequence_id: span.sequenceId,
        attributes: span.attributes as Record<string, unknown>,
      });
    }
  }
  return { groups: [...groups.values()], annotations };
}
