import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '@agl/core/errors';
import { newSpanId, newTraceId, rewardProblem, type Attributes, type SpanInput } from '@agl/core/schema';
import {
  ATTR_TRACER_NAME,
  REWARD_PRIMARY_NAME,
  SPAN_ANNOTATION,
  rewardNameKey,
  rewardValueKey,
} from '@agl/core/semconv';
import { fieldError } from '../http-errors';
import { EventCreateBody, bodyObject, parseEnvelope } from '../request-schemas';
import { sendJson, type RouteContext } from '../route-context';

/** Attribute holding an AGL 1.0 event's type on the span that records it. */
export const ATTR_EVENT_TYPE = 'agentlightning.event.type';
/** Prefix of an AGL 1.0 event's other `data` keys on the span that records it. */
export const ATTR_EVENT_DATA = 'agentlightning.event.data';

type EventParams = { rollout_id: string; attempt_id: string };

function flattenInto(out: Attributes, prefix: string, value: unknown): void {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    out[prefix] = value;
  } else if (Array.isArray(value)) {
    const kind = typeof value[0];
    const homogeneous = value.every((item) => typeof item === kind && ['string', 'number', 'boolean'].includes(kind));
    out[prefix] = homogeneous ? (value as string[]) : JSON.stringify(value);
  } else if (typeof value === 'object') {
    for (const [key, nested] of Object.entries(value as Record<string, unknown>))
      flattenInto(out, `${prefix}.${key}`, nested);
  }
}

async function resolveAttempt(ctx: RouteContext, rolloutId: string, attemptId: string): Promise<string> {
  const rollout = await ctx.store.getRolloutById(rolloutId);
  if (rollout === null) {
    throw new NotFoundError(
      'rollout',
      rolloutId,
      `Rollout ${rolloutId} not found. Post events for a rollout that exists (AGL_EVENT_URL names it).`,
    );
  }
  const attempts = (await ctx.store.queryAttempts({ rolloutId })).items;
  if (attempts.some((a) => a.attemptId === attemptId)) return attemptId;
  // AGL 1.0's controller always uses attempt "0"; `latest` is explicit.
  if (attemptId === 'latest' || attemptId === '0') {
    const latest = await ctx.store.getLatestAttempt(rolloutId);
    if (latest !== null) return latest.attemptId;
  }
  throw new NotFoundError(
    'attempt',
    attemptId,
    `Attempt ${attemptId} not found for rollout ${rolloutId}. Use one of its attempt ids (or "latest").`,
  );
}

/**
 * AGL 1.0's event route, `POST /api/rollouts/{rollout_id}/attempt/{attempt_id}/events` (the `AGL_EVENT_URL` of a
 * process agent). A `reward` event is stored as an `agentlightning.annotation` span in AGL 0.3's reward layout
 * (`agentlightning.reward.0.name = "primary"`, `.value`); other events become annotation spans carrying
 * `agentlightning.event.type` and the flattened `data`.
 */
export function registerEventRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post<{ Params: EventParams }>('/api/rollouts/:rollout_id/attempt/:attempt_id/events', async (request, reply) => {
    const body = parseEnvelope(EventCreateBody, bodyObject(request.body, 'event', false), 'event');
    const rolloutId = request.params.rollout_id;
    const attributes: Attributes = { [ATTR_EVENT_TYPE]: body.event_type };
    const data = { ...body.data };
    if (body.event_type === 'reward') {
      const value = data.value;
      const numeric = typeof value === 'boolean' ? Number(value) : value;
      if (typeof numeric !== 'number' || !Number.isFinite(numeric)) {
        throw fieldError(
          'data.value',
          `a reward event needs a finite number in data.value (got ${JSON.stringify(value) ?? 'nothing'})`,
        );
      }
      const problem = rewardProblem(numeric);
      if (problem) throw fieldError('data.value', `a reward event's data.value ${problem}`);
      attributes[rewardNameKey(0)] = REWARD_PRIMARY_NAME;
      attributes[rewardValueKey(0)] = numeric;
      delete data.value;
    }
    for (const [key, value] of Object.entries(data)) flattenInto(attributes, `${ATTR_EVENT_DATA}.${key}`, value);
    const attemptId = await resolveAttempt(ctx, rolloutId, request.params.attempt_id);
    const now = ctx.clock.now();
    const traceId = newTraceId();
    const spanId = newSpanId();
    const span: SpanInput = {
      rolloutId,
      attemptId,
      sequenceId: await ctx.store.getNextSpanSequenceId(rolloutId, attemptId),
      traceId,
      spanId,
      parentId: null,
      name: SPAN_ANNOTATION,
      status: { statusCode: 'OK', description: null },
      attributes,
      events: [],
      links: [],
      startTime: now,
      endTime: now,
      context: { traceId, spanId, isRemote: false, traceState: {} },
      parent: null,
      resource: { attributes: { [ATTR_TRACER_NAME]: 'agl-event-route' }, schemaUrl: '' },
    };
    await ctx.store.addSpan(span);
    return sendJson(reply, 200, {
      event_type: body.event_type,
      rollout_id: rolloutId,
      attempt_id: attemptId,
      timestamp: now,
      data: body.data,
    });
  });
}
