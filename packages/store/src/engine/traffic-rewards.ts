import { getRewardSource, getRewardValue, type RewardSource, type SpanLike } from '@agl/core/transitions';
import { ATTR_REWARD_SOURCE, REWARD_SOURCES, SPAN_ANNOTATION } from '@agl/core/semconv';
import { decodeTrafficKey, TRAFFIC_HOUR, type TrafficAnnotationRow, type TrafficRewardRow } from './traffic-rows';

/** The keys of a rollout the traffic view filters on (decoded). */
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

/** The decoded keys of a rollup or annotation row. */
export const trafficKeysOf = (row: {
  mode: string;
  source: string;
  agent: string;
  failed: number | boolean;
}): TrafficKeys => ({
  mode: row.mode === '' ? null : row.mode,
  source: decodeTrafficKey(row.source),
  agent: decodeTrafficKey(row.agent),
  failed: row.failed === true || row.failed === 1,
});

/** The primary reward key every AGL emitter writes (`agentlightning.reward.0.value`). */
const PRIMARY_REWARD = 'agentlightning.reward.0.value';

const sourceOf = (value: unknown): RewardSource =>
  value === REWARD_SOURCES.feedback || value === REWARD_SOURCES.judge ? value : 'agent';

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

/** The annotation rows grouped by rollout, each group in sequence order. */
function byRollout(annotations: readonly TrafficAnnotationRow[]): TrafficAnnotationRow[][] {
  const groups = new Map<string, TrafficAnnotationRow[]>();
  for (const row of annotations) {
    const list = groups.get(row.rollout_id);
    if (list) list.push(row);
    else groups.set(row.rollout_id, [row]);
  }
  const out = [...groups.values()];
  for (const rows of out) if (rows.length > 1) rows.sort((a, b) => a.sequence_id - b.sequence_id);
  return out;
}

/**
 * Final reward and feedback count of one rollout's annotation rows (in sequence order), with the precedence of
 * `findFinalReward` (the latest feedback, else the latest agent reward, else the latest judge score) and the count of
 * `listFeedback` (feedback spans with a primary reward).
 */
function finalReward(rows: readonly TrafficAnnotationRow[]): { finalReward: number | null; feedbackCount: number } {
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
  return { finalReward: feedback ?? agent ?? judge, feedbackCount };
}

/** Final reward and feedback count of each rollout among the annotation rows (see {@link finalReward}). */
export function rewardInfos(annotations: readonly TrafficAnnotationRow[]): TrafficRewardInfo[] {
  return byRollout(annotations).map((rows) => ({
    ...trafficKeysOf(rows[0]!),
    startTime: rows[0]!.start_time,
    ...finalReward(rows),
  }));
}

/**
 * The reward rollup rows of annotation rows: per hour of the rollouts' start and key, the rollouts with feedback, the
 * feedback entries, the rewarded rollouts and the sum of their final rewards (the sums the route would compute from
 * {@link rewardInfos}). Rows whose sums are all zero are left out.
 */
export function rollupRewards(annotations: readonly TrafficAnnotationRow[]): TrafficRewardRow[] {
  const out = new Map<string, TrafficRewardRow>();
  for (const rows of byRollout(annotations)) {
    const { finalReward: reward, feedbackCount } = finalReward(rows);
    if (reward === null && feedbackCount === 0) continue;
    const first = rows[0]!;
    const hour = Math.floor(first.start_time / TRAFFIC_HOUR);
    const failed = first.failed === true || first.failed === 1 ? 1 : 0;
    const key = `${hour}|${first.mode}|${first.source}|${first.agent}|${failed}`;
    let row = out.get(key);
    if (!row) {
      const keys = { hour, mode: first.mode, source: first.source, agent: first.agent, failed };
      row = { ...keys, with_feedback: 0, feedback_count: 0, rewarded: 0, reward_sum: 0 };
      out.set(key, row);
    }
    if (feedbackCount > 0) row.with_feedback += 1;
    row.feedback_count += feedbackCount;
    if (reward !== null) {
      row.rewarded += 1;
      row.reward_sum += reward;
    }
  }
  return [...out.values()];
}
