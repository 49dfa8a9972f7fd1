import type { FastifyInstance } from 'fastify';
import { JsonObject, NamedResources, Resource, camelToSnake, toWire, type NamedResourcesInput } from '@agl/core/schema';
import { ValidationError } from '@agl/core/errors';
import {
  ResourcesQueryBody,
  WorkerQueryBody,
  WorkerUpdateBody,
  bodyObject,
  normalizeQuery,
  pageOptions,
  parseEnvelope,
  queryFilters,
  rejectNulls,
} from '../request-schemas';
import { API_PREFIX, parseWireAt, sendJson, type RouteContext } from '../route-context';
import { registerReadRoutes } from './read-routes';
import { resourcesForCaller } from '../resource-secrets';
import { forbiddenResourceName } from '../../engine/input';
import { isForbiddenKey } from '@agl/core/guards';

type ResourcesParams = { resources_id: string };
type WorkerParams = { worker_id: string };

/**
 * A NamedResources body: each value is validated as a resource; error paths keep the resource name verbatim; a name
 * such as `__proto__` is a 422 that names it.
 */
export function parseNamedResourcesBody(raw: unknown): NamedResourcesInput {
  const body = bodyObject(raw, 'resources', false);
  const out: NamedResourcesInput = {};
  for (const [name, value] of Object.entries(body)) {
    if (isForbiddenKey(name)) throw forbiddenResourceName(name);
    out[name] = parseWireAt(Resource, 'resource', value, name, 'resources');
  }
  const check = NamedResources.safeParse(out);
  if (!check.success) throw new ValidationError(`Invalid resources: ${check.error.message}`, [], { status: 422 });
  return out;
}

function workerQuery(ctx: RouteContext, raw: unknown) {
  const body = parseEnvelope(WorkerQueryBody, raw, 'worker query');
  return ctx.store.queryWorkers({
    ...pageOptions(body, 'worker'),
    ...queryFilters(body, ['status_in', 'worker_id_contains']),
  });
}

/** Routes #14 to #23 of reference §3.3: workers, statistics and resources. */
export function registerResourceWorkerRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const P = API_PREFIX;

  registerReadRoutes(app, {
    path: `${P}/workers`,
    idParam: 'worker_id',
    shape: 'worker',
    what: 'worker query',
    listKeys: ['status_in'],
    query: (raw) => workerQuery(ctx, raw),
    get: (id) => ctx.store.getWorkerById(id),
  });

  app.post<{ Params: WorkerParams }>(`${P}/workers/:worker_id`, async (request, reply) => {
    const raw = bodyObject(request.body, 'worker heartbeat');
    rejectNulls(raw, ['heartbeat_stats']);
    const body = parseEnvelope(WorkerUpdateBody, raw, 'worker heartbeat');
    const update =
      body.heartbeat_stats === undefined
        ? {}
        : { heartbeatStats: parseEnvelope(JsonObject, body.heartbeat_stats, 'heartbeat_stats') };
    const worker = await ctx.store.updateWorker(request.params.worker_id, update);
    return sendJson(reply, 200, toWire('worker', worker));
  });

  app.get(`${P}/statistics`, async (_request, reply) => {
    const stats = await ctx.store.statistics();
    return sendJson(reply, 200, snakeKeys(stats));
  });

  app.get(`${P}/resources`, async (request, reply) => {
    const body = parseEnvelope(ResourcesQueryBody, normalizeQuery(request.query, []), 'resources query');
    const page = await ctx.store.queryResources({
      ...pageOptions(body, 'resources'),
      resourcesId: body.resources_id ?? null,
      resourcesIdContains: body.resources_id_contains ?? null,
    });
    return sendJson(reply, 200, {
      ...page,
      items: toWire(
        'resourcesUpdate',
        page.items.map((u) => resourcesForCaller(request, u)),
      ),
    });
  });

  app.post(`${P}/resources`, async (request, reply) => {
    const update = await ctx.store.addResources(parseNamedResourcesBody(request.body));
    return sendJson(reply, 201, toWire('resourcesUpdate', resourcesForCaller(request, update)));
  });

  app.get(`${P}/resources/latest`, async (request, reply) => {
    const update = resourcesForCaller(request, await ctx.store.getLatestResources());
    return sendJson(reply, 200, update === null ? null : toWire('resourcesUpdate', update));
  });

  app.post<{ Params: ResourcesParams }>(`${P}/resources/:resources_id`, async (request, reply) => {
    const update = await ctx.store.updateResources(request.params.resources_id, parseNamedResourcesBody(request.body));
    return sendJson(reply, 200, toWire('resourcesUpdate', resourcesForCaller(request, update)));
  });

  app.get<{ Params: ResourcesParams }>(`${P}/resources/:resources_id`, async (request, reply) => {
    const update = resourcesForCaller(request, await ctx.store.getResourcesById(request.params.resources_id));
    return sendJson(reply, 200, update === null ? null : toWire('resourcesUpdate', update));
  });
}

/** Flat camelCase keys → snake_case (statistics). */
export function snakeKeys(value: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelToSnake(k), v]));
}
