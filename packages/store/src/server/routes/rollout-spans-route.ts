import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '@agl/core/errors';
import { normalizeQuery } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';
import { answerSpanQuery } from './span-routes';

/** `GET /v1/agl/rollouts/{rollout_id}/spans`: one rollout's spans (AGL extension). */
export const ROLLOUT_SPANS_ROUTE = `${API_PREFIX}/rollouts/:rollout_id/spans`;

/**
 * `GET /v1/agl/rollouts/{rollout_id}/spans[?attempt_id=<id>|latest&limit=&offset=&sort_order=&name_contains=…]`: the
 * spans of one rollout, in sequence order, as the page `GET /v1/agl/spans?rollout_id=…` answers (`{items, total, limit,
 * offset}`, every span filter of that route accepted). `attempt_id=latest` picks the rollout's latest attempt. An
 * unknown rollout is a 404 that names it (the span query answers an empty page instead).
 */
export function registerRolloutSpansRoute(app: FastifyInstance, ctx: RouteContext): void {
  app.get<{ Params: { rollout_id: string } }>(ROLLOUT_SPANS_ROUTE, async (request, reply) => {
    const rolloutId = request.params.rollout_id;
    const rollout = await ctx.store.getRolloutById(rolloutId);
    if (rollout === null)
      throw new NotFoundError(
        'rollout',
        rolloutId,
        `No rollout ${JSON.stringify(rolloutId)} in this store; list rollouts with GET ${API_PREFIX}/rollouts.`,
      );
    const query = normalizeQuery(request.query, []);
    if (query.attempt_id === 'latest') {
      const latest = await ctx.store.getLatestAttempt(rolloutId);
      // A rollout still queued has no attempt yet: no span can belong to one.
      if (latest === null) return sendJson(reply, 200, { items: [], total: 0, limit: -1, offset: 0 });
      query.attempt_id = latest.attemptId;
    }
    return answerSpanQuery(ctx, reply, { ...query, rollout_id: rolloutId });
  });
}
