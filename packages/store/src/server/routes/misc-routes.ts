import type { FastifyInstance } from 'fastify';
import { isTerminalStatus, toWire, type Rollout } from '@agl/core/schema';
import { WaitBody, bodyObject, parseEnvelope } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';

/** Response header of `POST /waits/rollouts`: how many requested rollouts exist and are still running. */
export const WAIT_PENDING_HEADER = 'x-agl-wait-pending';

/** Response header of `POST /waits/rollouts` when the server answered early because it is shutting down. */
export const WAIT_CLOSING_HEADER = 'x-agl-server-closing';

/** Routes #1 (health) and #28 (waits) of reference §3.3. */
export function registerMiscRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const P = API_PREFIX;

  app.get(`${P}/health`, async (_request, reply) => sendJson(reply, 200, { status: 'ok' }));

  app.post(`${P}/waits/rollouts`, async (request, reply) => {
    const body = parseEnvelope(WaitBody, bodyObject(request.body, 'wait request', false), 'wait request');
    const requested = body.timeout ?? null;
    const effective = requested === null ? ctx.maxWaitSeconds : Math.min(requested, ctx.maxWaitSeconds);
    const ids = body.rollout_ids;
    let closing = false;
    const done: Rollout[] = await Promise.race([
      ctx.store.waitForRollouts(ids, { timeoutSeconds: effective }),
      ctx.closing.then(() => {
        closing = true;
        return ctx.store.waitForRollouts(ids, { timeoutSeconds: 0 });
      }),
    ]);
    if (closing) reply.header(WAIT_CLOSING_HEADER, '1');
    let pending = 0;
    if (done.length < ids.length) {
      const finished = new Set(done.map((r) => r.rolloutId));
      for (const id of new Set(ids)) {
        if (finished.has(id)) continue;
        const rollout = await ctx.store.getRolloutById(id);
        if (rollout !== null && !isTerminalStatus(rollout.status)) pending += 1;
      }
    }
    reply.header(WAIT_PENDING_HEADER, String(pending));
    return sendJson(reply, 200, toWire('rollout', done));
  });
}
