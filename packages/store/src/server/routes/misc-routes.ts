import type { FastifyInstance } from 'fastify';
import { RolloutStatus, isTerminalStatus, toWire, type Rollout } from '@agl/core/schema';
import { QueueWaitBody, WaitBody, bodyObject, parseEnvelope } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';

/** Response header of `POST /waits/rollouts`: how many requested rollouts exist and are still running. */
export const WAIT_PENDING_HEADER = 'x-agl-wait-pending';

/** Response header of `POST /waits/rollouts` when the server answered early because it is shutting down. */
export const WAIT_CLOSING_HEADER = 'x-agl-server-closing';

const NON_TERMINAL = RolloutStatus.options.filter((s) => !isTerminalStatus(s));

/** Routes #1 (health) and #28 (waits) of reference §3.3, plus the queue long poll `POST /waits/queue`. */
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
      // One counting query for the rest (not one lookup per id: a batch of 8,192 ids is polled every few seconds).
      const finished = new Set(done.map((r) => r.rolloutId));
      const rest = [...new Set(ids)].filter((id) => !finished.has(id));
      if (rest.length > 0)
        pending = (await ctx.store.queryRollouts({ rolloutIdIn: rest, statusIn: NON_TERMINAL, limit: 0 })).total;
    }
    reply.header(WAIT_PENDING_HEADER, String(pending));
    return sendJson(reply, 200, toWire('rollout', done));
  });

  // AGL extension: a long poll that answers `{ queued: true }` once rollouts may be queued (StoreClient.waitForQueue).
  app.post(`${P}/waits/queue`, async (request, reply) => {
    const body = parseEnvelope(
      QueueWaitBody,
      bodyObject(request.body, 'queue wait request', true),
      'queue wait request',
    );
    const store = ctx.store;
    if (!store.waitForQueue)
      return sendJson(reply, 404, { detail: 'This store backend cannot signal enqueues; poll dequeue instead.' });
    const controller = new AbortController();
    const timeoutMs = Math.min(body.timeout ?? ctx.maxWaitSeconds, ctx.maxWaitSeconds) * 1000;
    reply.raw.once('close', () => controller.abort());
    const queued = await Promise.race([
      store.waitForQueue({ timeoutMs, signal: controller.signal }),
      ctx.closing.then(() => false),
    ]);
    controller.abort();
    return sendJson(reply, 200, { queued });
  });
}
