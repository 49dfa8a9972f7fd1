import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { RolloutStatus, toWire, type ResourcesUpdate } from '@agl/core/schema';
import type { QueryRolloutsOptions } from '@agl/core/store';
import { fieldError } from '../http-errors';
import { normalizeQuery, parseEnvelope } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';
import { maskSecrets } from '../resource-secrets';
import { rewardStats, type RolloutSummary } from './ext-rollout-summaries';
import {
  isFiltering,
  matchesRollout,
  matchesSummary,
  MODE_FILTER,
  modeSelection,
  TRAFFIC_FILTER_FIELDS,
  trafficFilter,
} from './ext-traffic-filter';
import { registerTrafficRoute } from './ext-traffic-routes';

/** Prefix of AGL's extension routes (dashboard helpers that AGL 0.3's protocol cannot answer). */
export const EXT_PREFIX = `${API_PREFIX}/ext`;

/** Columns `GET /ext/rollouts` sorts by. The first five are the store's own fields (paged by the store). */
export const EXT_ROLLOUT_SORT_FIELDS = [
  'start_time',
  'end_time',
  'rollout_id',
  'status',
  'mode',
  'reward',
  'duration',
  'attempts',
  'worker_id',
  'resources_id',
] as const;
const STORE_SORTED: Record<string, string> = {
  start_time: 'startTime',
  end_time: 'endTime',
  rollout_id: 'rolloutId',
  status: 'status',
  mode: 'mode',
};
const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;
const DEFAULT_MAX_POINTS = 10_000;

const intString = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^-?\d+$/, 'expected an integer')
    .transform(Number),
]);
const numString = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, 'expected a number')
    .transform(Number),
]);

const ExtRolloutQuery = z.strictObject({
  limit: intString.optional(),
  offset: intString.optional(),
  sort_by: z.enum(EXT_ROLLOUT_SORT_FIELDS).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  status_in: z.array(RolloutStatus).optional(),
  mode_in: z.array(MODE_FILTER).optional(),
  rollout_id_contains: z.string().optional(),
  worker_id_contains: z.string().optional(),
  resources_id: z.string().optional(),
  ...TRAFFIC_FILTER_FIELDS,
});
const ExtRewardQuery = z.strictObject({
  mode_in: z.array(MODE_FILTER).optional(),
  success_threshold: numString.optional(),
  max_points: intString.optional(),
});
const ExtResourcesQuery = z.strictObject({ success_threshold: numString.optional() });

function summaryWire(s: RolloutSummary): Record<string, unknown> {
  return {
    ...(toWire('rollout', s.rollout) as Record<string, unknown>),
    attempt_count: s.attemptCount,
    final_reward: s.finalReward,
    feedback_count: s.feedback.length,
    duration: s.durationSeconds,
    worker_id: s.workerId,
  };
}

function sortValue(s: RolloutSummary, field: string): string | number | null {
  switch (field) {
    case 'reward':
      return s.finalReward;
    case 'duration':
      return s.durationSeconds;
    case 'attempts':
      return s.attemptCount;
    case 'worker_id':
      return s.workerId;
    case 'resources_id':
      return s.rollout.resourcesId;
    case 'end_time':
      return s.rollout.endTime;
    case 'rollout_id':
      return s.rollout.rolloutId;
    case 'status':
      return s.rollout.status;
    case 'mode':
      return s.rollout.mode;
    default:
      return s.rollout.startTime;
  }
}

/** Sorts in place; `null` sorts last in both directions; ties keep creation order. */
function sortSummaries(items: RolloutSummary[], field: string, order: 'asc' | 'desc'): void {
  const dir = order === 'desc' ? -1 : 1;
  items.sort((a, b) => {
    const x = sortValue(a, field);
    const y = sortValue(b, field);
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    if (x < y) return -dir;
    if (x > y) return dir;
    return 0;
  });
}

function pageBounds(limit: number | undefined, offset: number | undefined): { limit: number; offset: number } {
  const l = limit ?? DEFAULT_PAGE;
  const o = offset ?? 0;
  if (l < 1 || l > MAX_PAGE)
    throw fieldError('limit', `limit must be from 1 to ${MAX_PAGE} (got ${l}); page with offset`, 400);
  if (o < 0) throw fieldError('offset', `offset must be ≥ 0 (got ${o})`, 400);
  return { limit: l, offset: o };
}

/**
 * AGL extension routes under `/v1/agl/ext` for the dashboard: rollouts joined with reward, duration and attempt count
 * (sortable, paged on the server), reward series per resources version, and resource versions with their reward stats
 * (secrets masked). Built on the {@link LightningStore} interface only, so every backend serves them.
 */
export function registerExtRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const summaries = ctx.summaries;

  // Which store this server serves (the dashboard shows it).
  app.get(`${EXT_PREFIX}/info`, async (_request, reply) => sendJson(reply, 200, { store: ctx.storeLabel ?? null }));

  app.get(`${EXT_PREFIX}/rollouts`, async (request, reply) => {
    const q = parseEnvelope(
      ExtRolloutQuery,
      normalizeQuery(request.query, ['status_in', 'mode_in']),
      'rollout table query',
    );
    const { limit, offset } = pageBounds(q.limit, q.offset);
    const sortBy = q.sort_by ?? 'start_time';
    const sortOrder = q.sort_order ?? 'desc';
    // `none` (rollouts without a mode: live traffic) is matched here; the store filters the named modes.
    const modes = modeSelection(q.mode_in);
    const filters: QueryRolloutsOptions = {
      statusIn: q.status_in ?? null,
      modeIn: modes.modeIn,
      rolloutIdContains: q.rollout_id_contains || null,
      filterLogic: 'and',
    };
    const traffic = trafficFilter(q);
    const narrowed = isFiltering(traffic) || modes.narrowed;
    const storeSort = STORE_SORTED[sortBy];
    if (storeSort !== undefined && !q.worker_id_contains && !q.resources_id && !narrowed) {
      // Fast path: the store sorts and pages; only the page is joined.
      const page = await ctx.store.queryRollouts({ ...filters, limit, offset, sortBy: storeSort, sortOrder });
      const items = await summaries.summarizeAll(page.items);
      return sendJson(reply, 200, { items: items.map(summaryWire), total: page.total, limit, offset });
    }
    let all = await summaries.all(filters, (r) => modes.matches(r.mode) && matchesRollout(traffic, r));
    if (narrowed) all = all.filter((s) => matchesSummary(traffic, s));
    if (q.worker_id_contains) all = all.filter((s) => s.workerId?.includes(q.worker_id_contains!) ?? false);
    if (q.resources_id) all = all.filter((s) => s.rollout.resourcesId === q.resources_id);
    sortSummaries(all, sortBy, sortOrder);
    return sendJson(reply, 200, {
      items: all.slice(offset, offset + limit).map(summaryWire),
      total: all.length,
      limit,
      offset,
    });
  });

  app.get<{ Params: { rollout_id: string } }>(`${EXT_PREFIX}/rollouts/:rollout_id`, async (request, reply) => {
    const rollout = await ctx.store.getRolloutById(request.params.rollout_id);
    if (rollout === null) return sendJson(reply, 200, null);
    const summary = await summaries.summarize(rollout);
    const attempts = await ctx.store.queryAttempts({ rolloutId: rollout.rolloutId, sortBy: 'sequenceId' });
    const perAttempt = await Promise.all(
      attempts.items.map(async (attempt) => {
        const spans = await ctx.store.querySpans({
          rolloutId: rollout.rolloutId,
          attemptId: attempt.attemptId,
          limit: 0,
        });
        return { ...(toWire('attempt', attempt) as Record<string, unknown>), span_count: spans.total };
      }),
    );
    const feedback = summary.feedback.map((f) => ({
      reward: f.reward,
      comment: f.comment ?? null,
      dimensions: f.dimensions,
      time: f.time,
      sequence_id: f.sequenceId,
      span_id: f.spanId,
    }));
    return sendJson(reply, 200, { ...summaryWire(summary), attempts: perAttempt, feedback });
  });

  registerTrafficRoute(app, ctx);

  app.get(`${EXT_PREFIX}/rewards`, async (request, reply) => {
    const q = parseEnvelope(ExtRewardQuery, normalizeQuery(request.query, ['mode_in']), 'reward series query');
    const threshold = q.success_threshold ?? 1;
    const maxPoints = q.max_points ?? DEFAULT_MAX_POINTS;
    if (maxPoints < 1) throw fieldError('max_points', `max_points must be ≥ 1 (got ${maxPoints})`, 400);
    const selected = modeSelection(q.mode_in);
    const all = await summaries.all({ modeIn: selected.modeIn });
    const finished = all.filter((s) => s.rollout.endTime !== null && selected.matches(s.rollout.mode));
    const resources = (await ctx.store.queryResources({ sortBy: 'updateTime', sortOrder: 'asc' })).items;
    const points = finished.slice(Math.max(0, finished.length - maxPoints)).map((s) => ({
      rollout_id: s.rollout.rolloutId,
      mode: s.rollout.mode,
      resources_id: s.rollout.resourcesId,
      status: s.rollout.status,
      start_time: s.rollout.startTime,
      end_time: s.rollout.endTime,
      reward: s.finalReward,
    }));
    const byVersion = versionStats(resources, finished, threshold);
    const modes = [...new Set(finished.map((s) => s.rollout.mode ?? 'none'))].sort();
    const overall = Object.fromEntries(
      modes.map((mode) => [
        mode,
        {
          ...statsWire(
            rewardStats(
              finished.filter((s) => (s.rollout.mode ?? 'none') === mode).map((s) => s.finalReward),
              threshold,
            ),
          ),
          succeeded: finished.filter((s) => (s.rollout.mode ?? 'none') === mode && s.rollout.status === 'succeeded')
            .length,
          finished: finished.filter((s) => (s.rollout.mode ?? 'none') === mode).length,
        },
      ]),
    );
    return sendJson(reply, 200, {
      points,
      total_points: finished.length,
      truncated: finished.length > points.length,
      success_threshold: threshold,
      by_resources: byVersion,
      overall,
    });
  });

  app.get(`${EXT_PREFIX}/resources`, async (request, reply) => {
    const q = parseEnvelope(ExtResourcesQuery, normalizeQuery(request.query, []), 'resource versions query');
    const threshold = q.success_threshold ?? 1;
    const resources = (await ctx.store.queryResources({ sortBy: 'updateTime', sortOrder: 'asc' })).items;
    const latest = await ctx.store.getLatestResources();
    const finished = (await summaries.all()).filter((s) => s.rollout.endTime !== null);
    const stats = new Map(versionStats(resources, finished, threshold).map((v) => [v.resources_id, v]));
    const items = resources.map((r) => ({
      ...(toWire('resourcesUpdate', { ...r, resources: maskSecrets(r.resources) }) as Record<string, unknown>),
      is_latest: latest?.resourcesId === r.resourcesId,
      rewards: stats.get(r.resourcesId)?.modes ?? {},
    }));
    return sendJson(reply, 200, { items, total: items.length, success_threshold: threshold });
  });
}

function statsWire(s: ReturnType<typeof rewardStats>): Record<string, number | null> {
  return { count: s.count, mean: s.mean, min: s.min, max: s.max, success_rate: s.successRate };
}

function versionStats(resources: readonly ResourcesUpdate[], finished: readonly RolloutSummary[], threshold: number) {
  const byId = new Map<string, RolloutSummary[]>();
  for (const s of finished) {
    const id = s.rollout.resourcesId ?? '';
    const list = byId.get(id) ?? [];
    list.push(s);
    byId.set(id, list);
  }
  const known = new Set(resources.map((r) => r.resourcesId));
  const ordered = [
    ...resources.map((r) => ({
      id: r.resourcesId,
      version: r.version,
      createTime: r.createTime,
      updateTime: r.updateTime,
    })),
    ...[...byId.keys()]
      .filter((id) => !known.has(id))
      .map((id) => ({ id, version: null, createTime: null, updateTime: null })),
  ];
  return ordered.map((r, index) => {
    const list = byId.get(r.id) ?? [];
    const modes: Record<string, Record<string, number | null>> = {};
    for (const mode of ['train', 'val', 'test', 'none']) {
      const rewards = list.filter((s) => (s.rollout.mode ?? 'none') === mode).map((s) => s.finalReward);
      if (rewards.length > 0) modes[mode] = statsWire(rewardStats(rewards, threshold));
    }
    return {
      resources_id: r.id === '' ? null : r.id,
      index,
      version: r.version,
      create_time: r.createTime,
      update_time: r.updateTime,
      modes,
    };
  });
}
