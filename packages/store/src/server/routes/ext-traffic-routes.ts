import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Rollout, RolloutMode } from '@agl/core/schema';
import { encodeTrafficKey, TRAFFIC_HOUR, type TrafficRows, type TrafficRowsQuery } from '../../engine/traffic-rows';
import { fieldError } from '../http-errors';
import { normalizeQuery, parseEnvelope } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';
import {
  MODE_FILTER,
  modeSelection,
  PRODUCTION_SOURCES,
  TRAFFIC_FILTER_FIELDS,
  trafficFilter,
} from './ext-traffic-filter';
import {
  aggregateTraffic,
  aggregateTrafficRows,
  type TrafficAggregate,
  type TrafficAggregateOptions,
  type TrafficBucket,
  type TrafficScope,
} from './traffic-aggregate';

/** `GET /v1/agl/ext/traffic`: recorded rollouts per hour or day, for the dashboard's live traffic view. */
export const TRAFFIC_ROUTE = `${API_PREFIX}/ext/traffic`;

const BUCKET_SECONDS = { hour: 3600, day: 86_400 } as const;
/** Default window: the last 7 days by the hour, the last 30 days by the day (narrowed to the data's span). */
export const DEFAULT_TRAFFIC_WINDOW = { hour: 7 * 86_400, day: 30 * 86_400 } as const;
/** At most this many buckets per answer (about 83 days by the hour, 5 years by the day). */
export const MAX_TRAFFIC_BUCKETS = 2000;
/** A cached answer is reused at most this long (writes by other processes on the same database show within it). */
export const TRAFFIC_CACHE_SECONDS = 10;
const CACHE_ENTRIES = 64;

const TrafficQuery = z.strictObject({
  bucket: z.enum(['hour', 'day']).optional(),
  mode: MODE_FILTER.optional(),
  ...TRAFFIC_FILTER_FIELDS,
});

/** A store that aggregates traffic itself (`RuleStore.queryTraffic`: SQLite, PostgreSQL, memory). */
interface TrafficStore {
  queryTraffic(query: TrafficRowsQuery): Promise<TrafficRows | null>;
}
const aggregates = (store: unknown): store is TrafficStore =>
  typeof (store as Partial<TrafficStore>).queryTraffic === 'function';

/** Annotation rows (or reward sums) are read a slice of the window at a time, the event loop served between slices. */
export const TRAFFIC_SLICE_SECONDS = 86_400;

/**
 * The counts of the window (three reads: whole hours from the store's hourly rollup, the partial hours at either edge
 * from the rollouts), then its annotation rows one
 * {@link TRAFFIC_SLICE_SECONDS} slice at a time (slices end on whole days), yielding to the event loop between slices so
 * that health checks and other requests are answered while a poll runs on a synchronous store (SQLite). With
 * `rewardRollup`, a store that keeps the reward rollup answers the first slice with reward sums; the rest of the window
 * is then one read (a few hundred rows; the store recomputes stale hours a day at a time).
 */
async function readRows(store: TrafficStore, query: TrafficRowsQuery): Promise<TrafficRows | null> {
  // The counts: the partial hours at either edge apart from the whole hours between, each a short read of its own.
  const whole = [
    Math.ceil(query.since / TRAFFIC_HOUR) * TRAFFIC_HOUR,
    Math.floor(query.until / TRAFFIC_HOUR) * TRAFFIC_HOUR,
  ];
  const cuts = whole[0]! < whole[1]! ? [query.since, ...whole, query.until] : [query.since, query.until];
  const groups: TrafficRows['groups'] = [];
  for (let i = 0; i + 1 < cuts.length; i += 1) {
    if (!(cuts[i]! < cuts[i + 1]!)) continue;
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const part = await store.queryTraffic({ ...query, since: cuts[i]!, until: cuts[i + 1]!, omit: 'annotations' });
    if (part === null) return null;
    groups.push(...part.groups);
  }
  const annotations: TrafficRows['annotations'] = [];
  let rewards: TrafficRows['rewards'] = query.rewardRollup ? [] : undefined;
  let from = query.since;
  while (from < query.until) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const day = Math.min(query.until, Math.ceil((from + 1) / TRAFFIC_SLICE_SECONDS) * TRAFFIC_SLICE_SECONDS);
    const until = rewards !== undefined && from > query.since ? query.until : day;
    const part = await store.queryTraffic({ ...query, since: from, until, omit: 'groups' });
    for (const row of part?.annotations ?? []) annotations.push(row);
    if (part?.rewards === undefined) rewards = undefined;
    else rewards?.push(...part.rewards);
    from = until;
  }
  return { groups, annotations, ...(rewards !== undefined ? { rewards } : {}) };
}

function bucketWire(b: TrafficBucket): Record<string, number | null> {
  return {
    start: b.start,
    count: b.count,
    failed: b.failed,
    failure_rate: b.count === 0 ? null : b.failed / b.count,
    with_feedback: b.withFeedback,
    feedback_count: b.feedbackCount,
    rewarded: b.rewarded,
    mean_reward: b.rewarded === 0 ? null : b.rewardSum / b.rewarded,
  };
}

/**
 * The window's rows the generic way, for a store that cannot aggregate (a remote `StoreClient`): every rollout is read
 * and summarised through the server's summary cache.
 */
async function genericRows(ctx: RouteContext, since: number, until: number) {
  const page = await ctx.store.queryRollouts({ limit: -1, sortBy: 'startTime', sortOrder: 'asc' });
  const inWindow = page.items.filter((r: Rollout) => r.startTime >= since && r.startTime < until);
  const metadata = (r: Rollout, key: string) =>
    encodeTrafficKey((r.metadata as Record<string, unknown> | null | undefined)?.[key]);
  const groups = inWindow.map((r) => ({
    hour: Math.floor(r.startTime / TRAFFIC_HOUR),
    mode: r.mode ?? '',
    source: metadata(r, 'source'),
    agent: metadata(r, 'agent_name'),
    failed: r.status === 'failed' ? 1 : 0,
    n: 1,
  }));
  const summaries = await ctx.summaries.summarizeAll(inWindow);
  const infos = summaries.map((s, i) => {
    const g = groups[i]!;
    return {
      mode: s.rollout.mode,
      source: g.source === '' ? null : g.source.slice(1),
      agent: g.agent === '' ? null : g.agent.slice(1),
      failed: s.rollout.status === 'failed',
      startTime: s.rollout.startTime,
      finalReward: s.finalReward,
      feedbackCount: s.feedback.length,
    };
  });
  return { groups, infos };
}

/**
 * Registers {@link TRAFFIC_ROUTE}: per hour or day (UTC) of the rollouts' start, the count, failed count and rate,
 * feedback (rollouts with any, and entries), and the mean final reward (feedback, else the agent's, else a judge's).
 *
 * Filters: `scope` (`production`: sources `production` and `unscoped`, the default when neither `source` nor `mode`
 * is given; `all`), `mode`, `source` (`metadata.source`), `agent` (`metadata.agent_name`), `feedback=with|without`,
 * `min_reward`/`max_reward`, `since`/`until` (epoch seconds or ISO). Without `since`, the window is the last 7 days by
 * the hour or 30 by the day, starting later when the matching data does (the span of the data). Also answers the
 * distinct sources and agents of the window, for filter menus.
 *
 * Cost: SQLite, PostgreSQL and memory stores aggregate the window themselves (hourly counts from a rollup or an index,
 * and the annotation spans of the window's rewarded rollouts), never reading every rollout; answers are cached by
 * query and the server's write counter for at most {@link TRAFFIC_CACHE_SECONDS}.
 */
export function registerTrafficRoute(app: FastifyInstance, ctx: RouteContext): void {
  const cache = new Map<string, { writes: number; at: number; body: unknown }>();
  app.get(TRAFFIC_ROUTE, async (request, reply) => {
    const q = parseEnvelope(TrafficQuery, normalizeQuery(request.query, []), 'traffic query');
    const now = ctx.clock.now();
    const writes = ctx.writes?.() ?? null;
    const cacheKey = JSON.stringify(q);
    const hit = cache.get(cacheKey);
    if (writes !== null && hit !== undefined && hit.writes === writes && now - hit.at < TRAFFIC_CACHE_SECONDS)
      return sendJson(reply, 200, hit.body);

    const bucket = q.bucket ?? 'hour';
    const size = BUCKET_SECONDS[bucket];
    const filter = trafficFilter(q);
    const scope: TrafficScope = q.scope ?? (q.source === undefined && q.mode === undefined ? 'production' : 'all');
    const until = filter.until ?? now;
    let since = filter.since ?? until - DEFAULT_TRAFFIC_WINDOW[bucket];
    if (!(since < until)) throw fieldError('since', `since (${since}) must be before until (${until})`, 400);
    const n = Math.ceil((until - Math.floor(since / size) * size) / size);
    if (n > MAX_TRAFFIC_BUCKETS)
      throw fieldError(
        'since',
        `the window holds ${n} ${bucket}s; at most ${MAX_TRAFFIC_BUCKETS} per request (use bucket=day or a later since)`,
        400,
      );
    const modes = modeSelection(q.mode === undefined ? undefined : [q.mode]);
    const options = (from: number): TrafficAggregateOptions => ({
      filter,
      scope,
      modeMatches: (mode) => modes.matches(mode as RolloutMode),
      since: from,
      until,
      bucketSeconds: size,
    });
    // Without reward or feedback filters, whole hours' reward sums come from the store's rollup where it keeps one.
    const rewardRollup = filter.minReward === null && filter.maxReward === null && filter.feedback === null;
    const sources = filter.source !== null ? [filter.source] : scope === 'production' ? PRODUCTION_SOURCES : null;
    const rows = aggregates(ctx.store)
      ? await readRows(ctx.store, { since, until, bucketSeconds: size, sources, rewardRollup })
      : null;
    const generic = rows === null ? await genericRows(ctx, since, until) : null;
    const run = (from: number): TrafficAggregate =>
      rows !== null
        ? aggregateTrafficRows(rows, options(from))
        : aggregateTraffic(generic!.groups, generic!.infos, options(from));
    let result = run(since);
    // No `since`: a window longer than the data starts at the bucket of the earliest matching rollout.
    const fitted = filter.since === null && result.earliest !== null && result.earliest > since;
    if (fitted) {
      since = Math.max(since, Math.floor(result.earliest! / size) * size);
      result = run(since);
    }
    const body = {
      bucket,
      bucket_seconds: size,
      since,
      until,
      scope,
      fitted,
      buckets: result.buckets.map(bucketWire),
      total: { ...bucketWire(result.total), start: since },
      sources: result.sources,
      agents: result.agents,
    };
    if (writes !== null) {
      if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
      cache.set(cacheKey, { writes, at: now, body });
    }
    return sendJson(reply, 200, body);
  });
}
