import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { fieldError } from '../http-errors';
import { normalizeQuery, parseEnvelope } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';
import {
  MODE_FILTER,
  modeSelection,
  agentOf,
  matchesRollout,
  matchesSummary,
  sourceOf,
  TRAFFIC_FILTER_FIELDS,
  trafficFilter,
} from './ext-traffic-filter';

/** `GET /v1/agl/ext/traffic`: recorded rollouts per hour or day, for the dashboard's live traffic view. */
export const TRAFFIC_ROUTE = `${API_PREFIX}/ext/traffic`;

const BUCKET_SECONDS = { hour: 3600, day: 86_400 } as const;
/** Default window: the last 2 days by the hour, the last 30 days by the day. */
const DEFAULT_WINDOW = { hour: 2 * 86_400, day: 30 * 86_400 } as const;
/** At most this many buckets per answer (about 83 days by the hour, 5 years by the day). */
export const MAX_TRAFFIC_BUCKETS = 2000;

const TrafficQuery = z.strictObject({
  bucket: z.enum(['hour', 'day']).optional(),
  mode: MODE_FILTER.optional(),
  ...TRAFFIC_FILTER_FIELDS,
});

interface Bucket {
  start: number;
  count: number;
  failed: number;
  withFeedback: number;
  feedbackCount: number;
  rewarded: number;
  rewardSum: number;
}

function emptyBucket(start: number): Bucket {
  return { start, count: 0, failed: 0, withFeedback: 0, feedbackCount: 0, rewarded: 0, rewardSum: 0 };
}

function bucketWire(b: Bucket): Record<string, number | null> {
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
 * Registers {@link TRAFFIC_ROUTE}: per hour or day (UTC) of the rollouts' start, the count, failed count and rate,
 * feedback (rollouts with any, and entries), and the mean final reward (feedback, else the agent's, else a judge's).
 * Filters: `mode`, `source` (`metadata.source`), `agent` (`metadata.agent_name`), `feedback=with|without`,
 * `min_reward`/`max_reward`, `since`/`until` (epoch seconds or ISO; default the last 2 days by the hour, 30 by the day).
 * Also answers the distinct sources and agents of the window, for filter menus. Summaries come from the server's
 * bounded cache, so a poll reads one rollout query plus the annotation spans of rollouts it has not summarised yet.
 */
export function registerTrafficRoute(app: FastifyInstance, ctx: RouteContext): void {
  app.get(TRAFFIC_ROUTE, async (request, reply) => {
    const q = parseEnvelope(TrafficQuery, normalizeQuery(request.query, []), 'traffic query');
    const bucket = q.bucket ?? 'hour';
    const size = BUCKET_SECONDS[bucket];
    const filter = trafficFilter(q);
    const until = filter.until ?? ctx.clock.now();
    const since = filter.since ?? until - DEFAULT_WINDOW[bucket];
    if (!(since < until)) throw fieldError('since', `since (${since}) must be before until (${until})`, 400);
    const first = Math.floor(since / size) * size;
    const n = Math.ceil((until - first) / size);
    if (n > MAX_TRAFFIC_BUCKETS)
      throw fieldError(
        'since',
        `the window holds ${n} ${bucket}s; at most ${MAX_TRAFFIC_BUCKETS} per request (use bucket=day or a later since)`,
        400,
      );
    const window = { ...filter, since, until };
    const modes = modeSelection(q.mode === undefined ? undefined : [q.mode]);
    const page = await ctx.store.queryRollouts({
      modeIn: modes.modeIn,
      limit: -1,
      sortBy: 'startTime',
      sortOrder: 'asc',
    });
    const inWindow = page.items.filter((r) => r.startTime >= since && r.startTime < until && modes.matches(r.mode));
    const sources = new Set<string>();
    const agents = new Set<string>();
    for (const r of inWindow) {
      const source = sourceOf(r);
      const agent = agentOf(r);
      if (source !== null) sources.add(source);
      if (agent !== null) agents.add(agent);
    }
    const buckets: Bucket[] = Array.from({ length: n }, (_, i) => emptyBucket(first + i * size));
    const total = emptyBucket(first);
    const summaries = await ctx.summaries.summarizeAll(inWindow.filter((r) => matchesRollout(window, r)));
    for (const s of summaries) {
      if (!matchesSummary(window, s)) continue;
      const b = buckets[Math.floor((s.rollout.startTime - first) / size)];
      if (b === undefined) continue;
      for (const acc of [b, total]) {
        acc.count += 1;
        if (s.rollout.status === 'failed') acc.failed += 1;
        if (s.feedback.length > 0) acc.withFeedback += 1;
        acc.feedbackCount += s.feedback.length;
        if (s.finalReward !== null) {
          acc.rewarded += 1;
          acc.rewardSum += s.finalReward;
        }
      }
    }
    return sendJson(reply, 200, {
      bucket,
      bucket_seconds: size,
      since,
      until,
      buckets: buckets.map(bucketWire),
      total: { ...bucketWire(total), start: since },
      sources: [...sources].sort(),
      agents: [...agents].sort(),
    });
  });
}
