import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { fromWire, toWire } from '@agl/core/schema';
import { applyRecords, recordFeedback, type ApplyRecordsResult } from '@agl/core/store';
import { bodyObject, parseEnvelope } from '../request-schemas';
import { API_PREFIX, sendJson, type RouteContext } from '../route-context';
import { checkSpanCount } from '../../ingest-limits';

/** `POST /v1/agl/records`: a production recorder's batch (DESIGN.md Contract 1b). */
export const RECORDS_ROUTE = `${API_PREFIX}/records`;

type BatchApply = (records: readonly unknown[]) => Promise<ApplyRecordsResult>;

const RecordsBody = z.strictObject({ records: z.array(z.unknown()) });
const FeedbackBody = z.strictObject({
  reward: z.union([z.number(), z.boolean()]),
  comment: z.string().max(10_000).optional(),
  dimensions: z.record(z.string().min(1).max(200), z.number()).optional(),
});

/**
 * The routes of production recording: `POST /v1/agl/records` applies a recorder's batch of rollout starts, spans and
 * ends in order (idempotent, so a recorder may resend it) and answers `{ applied, rejected }`; `POST
 * /v1/agl/rollouts/{rollout_id}/feedback` records a user's late feedback as the rollout's final reward.
 */
export function registerProductionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post(RECORDS_ROUTE, async (request, reply) => {
    const body = parseEnvelope(RecordsBody, bodyObject(request.body, 'records batch', false), 'records batch');
    const records = body.records.map((record) => fromWire('productionRecord', record));
    let spans = 0;
    for (const record of records) {
      const list = (record as { spans?: unknown }).spans;
      if (Array.isArray(list)) spans += list.length;
    }
    checkSpanCount(spans, ctx.limits);
    // The embedded stores apply a batch in one transaction (`RuleStore.applyProductionRecords`); any other store
    // (a remote client) record by record.
    const batched = (ctx.store as { applyProductionRecords?: BatchApply }).applyProductionRecords;
    const result = batched ? await batched.call(ctx.store, records) : await applyRecords(ctx.store, records);
    ctx.releases?.afterBatch();
    return sendJson(reply, 200, { applied: result.applied, rejected: result.rejected.map((r) => toSnake(r)) });
  });

  app.post<{ Params: { rollout_id: string } }>(
    `${API_PREFIX}/rollouts/:rollout_id/feedback`,
    async (request, reply) => {
      const body = parseEnvelope(FeedbackBody, bodyObject(request.body, 'feedback', false), 'feedback');
      const span = await recordFeedback(ctx.store, request.params.rollout_id, body.reward, {
        ...(body.comment !== undefined ? { comment: body.comment } : {}),
        ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}),
      });
      ctx.releases?.afterBatch();
      return sendJson(reply, 201, { span: toWire('span', span) });
    },
  );
}

function toSnake(rejected: { index: number; kind: string; errorType: string; detail: string }): object {
  return { index: rejected.index, kind: rejected.kind, error_type: rejected.errorType, detail: rejected.detail };
}
