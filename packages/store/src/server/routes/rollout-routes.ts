import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  EnqueueRolloutRequest,
  JsonObject,
  JsonValue,
  RolloutConfig,
  RolloutMode,
  RolloutStatus,
  toWire,
} from '@agl/core/schema';
import type { AttemptUpdate, RolloutUpdate } from '@agl/core/store';
import {
  AttemptQueryBody,
  AttemptUpdateBody,
  StartRolloutIdsBody,
  DequeueBody,
  RolloutQueryBody,
  StartAttemptBody,
  bodyObject,
  normalizeQuery,
  pageOptions,
  parseEnvelope,
  queryFilters,
  rejectNulls,
} from '../request-schemas';
import { API_PREFIX, parseWireAt, sendJson, type RouteContext } from '../route-context';
import { registerReadRoutes } from './read-routes';

type RolloutParams = { rollout_id: string };
type AttemptParams = { rollout_id: string; attempt_id: string };

const EnqueueEnvelope = z.strictObject({ rollouts: z.array(z.unknown()) });
const UpdateRolloutBody = z.strictObject({
  input: JsonValue.optional(),
  mode: RolloutMode.optional(),
  resources_id: z.string().nullable().optional(),
  status: RolloutStatus.optional(),
  config: z.unknown().optional(),
  metadata: JsonObject.nullable().optional(),
});

function queryRollouts(ctx: RouteContext, raw: unknown) {
  const body = parseEnvelope(RolloutQueryBody, raw, 'rollout query');
  return ctx.store.queryRollouts({
    ...pageOptions(body, 'rollout'),
    ...queryFilters(body, ['status_in', 'rollout_id_in', 'rollout_id_contains', 'mode_in', 'status', 'rollout_ids']),
  });
}

function queryAttempts(ctx: RouteContext, rolloutId: string, raw: unknown) {
  const body = parseEnvelope(AttemptQueryBody, raw, 'attempt query');
  return ctx.store.queryAttempts({ rolloutId, ...pageOptions(body, 'attempt', 'sequence_id') });
}

/** Routes #2 to #13 of reference §3.3: queue, rollouts and attempts. */
export function registerRolloutRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const P = API_PREFIX;

  app.post(`${P}/queues/rollouts/enqueue`, async (request, reply) => {
    const envelope = parseEnvelope(
      EnqueueEnvelope,
      bodyObject(request.body, 'enqueue request', false),
      'enqueue request',
    );
    const requests = envelope.rollouts.map((item, i) =>
      parseWireAt(EnqueueRolloutRequest, 'enqueueRequest', item, `rollouts.${i}`, 'enqueue request'),
    );
    if (requests.length === 0) return sendJson(reply, 201, []);
    const rollouts =
      requests.length === 1
        ? [await ctx.store.enqueueRollout(requests[0]!)]
        : await ctx.store.enqueueRollouts(requests);
    return sendJson(reply, 201, toWire('rollout', rollouts));
  });

  app.post(`${P}/queues/rollouts/dequeue`, async (request, reply) => {
    const body = parseEnvelope(DequeueBody, bodyObject(request.body, 'dequeue request'), 'dequeue request');
    const limit = body.limit ?? 1;
    if (limit <= 0) return sendJson(reply, 200, []);
    const claimed = await ctx.store.dequeueRollouts({ limit, workerId: body.worker_id ?? null });
    return sendJson(reply, 200, toWire('rollout', claimed));
  });

  app.post(`${P}/rollouts`, async (request, reply) => {
    const raw = bodyObject(request.body, 'start_rollout request', false);
    const { worker_id: workerId, rollout_id: rolloutId, attempt_id: attemptId, start_time: startTime, ...rest } = raw;
    const chosen = parseEnvelope(
      StartRolloutIdsBody,
      { worker_id: workerId, rollout_id: rolloutId, attempt_id: attemptId, start_time: startTime },
      'start_rollout request',
    );
    const parsed = parseWireAt(EnqueueRolloutRequest, 'enqueueRequest', rest, '', 'start_rollout request');
    const rollout = await ctx.store.startRollout({
      ...parsed,
      workerId: chosen.worker_id ?? null,
      ...(chosen.rollout_id !== undefined ? { rolloutId: chosen.rollout_id } : {}),
      ...(chosen.attempt_id !== undefined ? { attemptId: chosen.attempt_id } : {}),
      ...(chosen.start_time !== undefined ? { startTime: chosen.start_time } : {}),
    });
    return sendJson(reply, 201, toWire('rollout', rollout));
  });

  registerReadRoutes(app, {
    path: `${P}/rollouts`,
    idParam: 'rollout_id',
    shape: 'rollout',
    what: 'rollout query',
    listKeys: ['status_in', 'rollout_id_in', 'mode_in', 'status', 'rollout_ids'],
    query: (raw) => queryRollouts(ctx, raw),
    get: (id) => ctx.store.getRolloutById(id),
  });

  app.post<{ Params: RolloutParams }>(`${P}/rollouts/:rollout_id`, async (request, reply) => {
    const raw = bodyObject(request.body, 'update_rollout request', false);
    rejectNulls(raw, ['status', 'config']);
    const body = parseEnvelope(UpdateRolloutBody, raw, 'update_rollout request');
    const update: RolloutUpdate = {};
    if (Object.hasOwn(raw, 'input')) update.input = body.input ?? null;
    if (body.mode !== undefined) update.mode = body.mode;
    if (body.resources_id !== undefined) update.resourcesId = body.resources_id;
    if (body.status !== undefined) update.status = body.status;
    if (body.metadata !== undefined) update.metadata = body.metadata;
    if (Object.hasOwn(raw, 'config')) {
      update.config = parseWireAt(RolloutConfig, 'rolloutConfig', raw.config, 'config', 'update_rollout request');
    }
    const rollout = await ctx.store.updateRollout(request.params.rollout_id, update);
    return sendJson(reply, 200, toWire('rollout', rollout));
  });

  app.post<{ Params: RolloutParams }>(`${P}/rollouts/:rollout_id/attempts`, async (request, reply) => {
    const body = parseEnvelope(
      StartAttemptBody,
      bodyObject(request.body, 'start_attempt request'),
      'start_attempt request',
    );
    const rollout = await ctx.store.startAttempt(request.params.rollout_id, { workerId: body.worker_id ?? null });
    return sendJson(reply, 201, toWire('rollout', rollout));
  });

  app.get<{ Params: RolloutParams }>(`${P}/rollouts/:rollout_id/attempts`, async (request, reply) => {
    const page = await queryAttempts(ctx, request.params.rollout_id, normalizeQuery(request.query, []));
    return sendJson(reply, 200, { ...page, items: toWire('attempt', page.items) });
  });

  app.post<{ Params: RolloutParams }>(`${P}/rollouts/:rollout_id/attempts/search`, async (request, reply) => {
    const page = await queryAttempts(ctx, request.params.rollout_id, bodyObject(request.body, 'attempt query'));
    return sendJson(reply, 200, { ...page, items: toWire('attempt', page.items) });
  });

  app.get<{ Params: RolloutParams }>(`${P}/rollouts/:rollout_id/attempts/latest`, async (request, reply) => {
    const attempt = await ctx.store.getLatestAttempt(request.params.rollout_id);
    return sendJson(reply, 200, attempt === null ? null : toWire('attempt', attempt));
  });

  app.post<{ Params: AttemptParams }>(`${P}/rollouts/:rollout_id/attempts/:attempt_id`, async (request, reply) => {
    const raw = bodyObject(request.body, 'update_attempt request', false);
    rejectNulls(raw, ['status', 'worker_id', 'last_heartbeat_time', 'end_time', 'metadata']);
    const body = parseEnvelope(AttemptUpdateBody, raw, 'update_attempt request');
    const update: AttemptUpdate = {};
    if (body.status !== undefined) update.status = body.status;
    if (body.worker_id !== undefined) update.workerId = body.worker_id;
    if (body.last_heartbeat_time !== undefined) update.lastHeartbeatTime = body.last_heartbeat_time;
    if (body.end_time !== undefined) update.endTime = body.end_time;
    if (body.metadata !== undefined) update.metadata = parseEnvelope(JsonObject, body.metadata, 'metadata');
    const attempt = await ctx.store.updateAttempt(request.params.rollout_id, request.params.attempt_id, update);
    return sendJson(reply, 200, toWire('attempt', attempt));
  });
}
