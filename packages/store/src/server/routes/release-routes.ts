import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ValidationError } from '@agl/core/errors';
import { releaseToWire, toWire, type Release } from '@agl/core/schema';
import type { LightningStore, ReleaseStore, StartReleaseRequest } from '@agl/core/store';
import { bodyObject, parseEnvelope } from '../request-schemas';
import { resourcesForCaller } from '../resource-secrets';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';
import { parseNamedResourcesBody } from '../named-resources-body';

/** `…/v1/agl/releases`: guarded releases (DESIGN.md Contract 4c). */
export const RELEASES_ROUTE = `${API_PREFIX}/releases`;

const StartBody = z.strictObject({
  candidate: z.string().min(1).optional(),
  candidate_resources: z.record(z.string(), z.unknown()).optional(),
  candidate_id: z.string().min(1).optional(),
  baseline: z.string().min(1).optional(),
  shares: z.array(z.number()).optional(),
  metric: z.string().min(1).optional(),
  guards: z.array(z.string()).optional(),
  min_requests: z.number().int().optional(),
  max_duration_seconds: z.number().nullable().optional(),
  alpha: z.number().optional(),
});
const EndBody = z.strictObject({ reason: z.string().max(2000).optional() });

function releasesOf(store: LightningStore): ReleaseStore {
  if (!store.startRelease) {
    throw new ValidationError('This store has no releases (it does not implement startRelease).', [], { status: 400 });
  }
  return store as LightningStore & ReleaseStore;
}

const wire = (release: Release) => releaseToWire(release);

/**
 * The release routes (same token as the rest):
 * - `POST /v1/agl/releases` starts one (`candidate` or `candidate_resources` [+ `candidate_id`], `baseline`,
 *   `shares`, `metric`, `guards`, `min_requests`, `max_duration_seconds`, `alpha`) → 201 and the release;
 * - `GET /v1/agl/releases` → `{ items }`, newest first; `GET /v1/agl/releases/{id}` → the release (404 unknown);
 * - `POST /v1/agl/releases/{id}/promote|abort` (`{ reason? }`) ends it by hand; `POST …/{id}/evaluate` runs the
 *   sequential test now;
 * - `GET /v1/agl/releases/serving` → `{ latest, release: { id, share, baseline, candidate } | null }` with the
 *   resources of both arms (what `observe` caches).
 * After every production batch and feedback the server evaluates the running release in the background.
 */
export function registerReleaseRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post(RELEASES_ROUTE, async (request, reply) => {
    const body = parseEnvelope(StartBody, bodyObject(request.body, 'release', false), 'release');
    const req: StartReleaseRequest = {
      ...(body.candidate !== undefined ? { candidate: body.candidate } : {}),
      ...(body.candidate_resources !== undefined
        ? { candidateResources: parseNamedResourcesBody(body.candidate_resources) }
        : {}),
      ...(body.candidate_id !== undefined ? { candidateId: body.candidate_id } : {}),
      ...(body.baseline !== undefined ? { baseline: body.baseline } : {}),
      ...(body.shares !== undefined ? { shares: body.shares } : {}),
      ...(body.metric !== undefined ? { metric: body.metric } : {}),
      ...(body.guards !== undefined ? { guards: body.guards } : {}),
      ...(body.min_requests !== undefined ? { minRequests: body.min_requests } : {}),
      ...(body.max_duration_seconds !== undefined ? { maxDurationSeconds: body.max_duration_seconds } : {}),
      ...(body.alpha !== undefined ? { alpha: body.alpha } : {}),
    };
    return sendJson(reply, 201, wire(await releasesOf(ctx.store).startRelease(req)));
  });

  app.get(RELEASES_ROUTE, async (_request, reply) => {
    const items = await releasesOf(ctx.store).listReleases();
    return sendJson(reply, 200, { items: items.map(wire) });
  });

  app.get(`${RELEASES_ROUTE}/serving`, async (request, reply) => {
    const serving = await releasesOf(ctx.store).getServingResources();
    const resources = <T extends Parameters<typeof resourcesForCaller>[1]>(u: T) => {
      const shown = resourcesForCaller(request, u);
      return shown === null ? null : toWire('resourcesUpdate', shown);
    };
    return sendJson(reply, 200, {
      latest: resources(serving.latest),
      release: serving.release
        ? {
            id: serving.release.releaseId,
            share: serving.release.share,
            baseline: resources(serving.release.baseline),
            candidate: resources(serving.release.candidate),
          }
        : null,
    });
  });

  app.get<{ Params: { release_id: string } }>(`${RELEASES_ROUTE}/:release_id`, async (request, reply) => {
    const release = await releasesOf(ctx.store).getRelease(request.params.release_id);
    if (!release)
      return sendJson(reply, 404, {
        detail: `Release ${request.params.release_id} not found. List releases with GET ${RELEASES_ROUTE}.`,
        error_type: 'AGL_NotFoundError',
      });
    return sendJson(reply, 200, wire(release));
  });

  for (const action of ['promote', 'abort'] as const) {
    app.post<{ Params: { release_id: string } }>(`${RELEASES_ROUTE}/:release_id/${action}`, async (request, reply) => {
      const body = parseEnvelope(EndBody, bodyObject(request.body, `${action} request`), `${action} request`);
      const store = releasesOf(ctx.store);
      const options = body.reason !== undefined ? { reason: body.reason } : {};
      const release =
        action === 'promote'
          ? await store.promoteRelease(request.params.release_id, options)
          : await store.abortRelease(request.params.release_id, options);
      return sendJson(reply, 200, wire(release));
    });
  }

  app.post<{ Params: { release_id: string } }>(`${RELEASES_ROUTE}/:release_id/evaluate`, async (request, reply) => {
    return sendJson(reply, 200, wire(await releasesOf(ctx.store).evaluateRelease(request.params.release_id)));
  });
}
