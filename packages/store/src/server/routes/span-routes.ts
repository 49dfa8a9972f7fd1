import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { ValidationError } from '@agl/core/errors';
import { isRecord } from '@agl/core/guards';
import { Span, fromWire, jsonStructure, toWire, toWireJson, type SpanInput } from '@agl/core/schema';
import type { LightningStore, PaginatedResult, QuerySpansOptions } from '@agl/core/store';
import {
  NextSequenceBatchBody,
  NextSequenceBody,
  SpanQueryBody,
  bodyObject,
  normalizeQuery,
  pageOptions,
  parseEnvelope,
  queryFilters,
} from '../request-schemas';
import {
  API_PREFIX,
  JsonText,
  SPAN_BATCH_ROUTE,
  parseJsonBody,
  parseWireAt,
  sendJson,
  sendJsonText,
  type RouteContext,
} from '../route-context';
import { checkAttributeCount, checkSpanCount } from '../../ingest-limits';
import { extractSpanAttributes } from '../span-batch-attributes';

/** `echo: false` (an AGL extension the StoreClient sends): answer `{ inserted: [indexes] }` instead of the spans. */
const SpanBatchEnvelope = z.strictObject({ spans: z.array(z.unknown()), echo: z.boolean().optional() });

/** A store that can answer span queries with stored JSON text (the embedded stores, see `EngineStore.querySpanDocs`). */
interface SpanDocSource {
  querySpanDocs(options: QuerySpansOptions): Promise<PaginatedResult<string> | null>;
}

const hasSpanDocs = (store: LightningStore): store is LightningStore & SpanDocSource =>
  typeof (store as Partial<SpanDocSource>).querySpanDocs === 'function';

function spanQueryOptions(raw: unknown): QuerySpansOptions {
  const body = parseEnvelope(SpanQueryBody, raw, 'span query');
  return {
    ...pageOptions(body, 'span', 'sequence_id'),
    rolloutId: body.rollout_id,
    ...queryFilters(body, [
      'attempt_id',
      'trace_id',
      'trace_id_contains',
      'span_id',
      'span_id_contains',
      'parent_id',
      'parent_id_contains',
      'name',
      'name_contains',
    ]),
  };
}

/**
 * Answers a span query. From stores that keep JSON text, the page is written straight from the stored documents
 * (`toWireJson` renames the known keys and copies attributes byte for byte): parsing and re-serialising the spans was
 * the largest cost of `querySpans` on the server.
 */
export async function answerSpanQuery(ctx: RouteContext, reply: FastifyReply, raw: unknown): Promise<FastifyReply> {
  const options = spanQueryOptions(raw);
  const docs = hasSpanDocs(ctx.store) ? await ctx.store.querySpanDocs(options) : null;
  if (docs !== null) {
    const items = docs.items.map((doc) => toWireJson('span', doc)).join(',');
    return sendJsonText(
      reply,
      200,
      `{"items":[${items}],"total":${docs.total},"limit":${docs.limit},"offset":${docs.offset}}`,
    );
  }
  const page = await ctx.store.querySpans(options);
  return sendJson(reply, 200, { ...page, items: toWire('span', page.items) });
}

/** A store that can keep attribute maps as JSON text (SQLite, see `EngineStore.addSpansWithAttributesJson`). */
interface AttributeTextStore {
  addSpansWithAttributesJson(spans: SpanInput[], attributesJson: ReadonlyArray<string | null>): Promise<Span[]> | null;
}

const keepsAttributeText = (store: LightningStore): store is LightningStore & AttributeTextStore =>
  typeof (store as Partial<AttributeTextStore>).addSpansWithAttributesJson === 'function';

/** Indexes of `spans` that `stored` holds (a duplicate span id is stored once, the first time). */
function insertedIndexes(spans: readonly Span[], stored: readonly Span[]): number[] {
  const key = (s: { rolloutId: string; attemptId: string; spanId: string }): string =>
    `${s.rolloutId}\u0000${s.attemptId}\u0000${s.spanId}`;
  const inserted = new Set(stored.map(key));
  const indexes: number[] = [];
  spans.forEach((span, i) => {
    if (inserted.delete(key(span))) indexes.push(i);
  });
  return indexes;
}

/**
 * The batch route's fast path, for StoreClient's `echo: false` batches into a store that keeps JSON text: the attribute
 * maps are cut out of the body as checked text (`extractSpanAttributes`) and stored as they are, and only the rest is
 * parsed. Returns the inserted indexes, or null whenever the usual path must run instead (another store, an echo
 * wanted, text the scanner does not take, or any validation error, which the usual path then words).
 */
async function addSpansKeepingAttributeText(ctx: RouteContext, body: string): Promise<number[] | null> {
  if (!keepsAttributeText(ctx.store)) return null;
  const extracted = extractSpanAttributes(body);
  if (extracted === null) return null;
  // A map of at most `maxAttributesPerSpan` values has at most that many members; larger ones are counted exactly below.
  const { maxAttributesPerSpan } = ctx.limits;
  if (
    extracted.attributesJson.some(
      (text) => text !== null && jsonStructure(text, maxAttributesPerSpan + 1).values > maxAttributesPerSpan,
    )
  )
    return null;
  let envelope: z.infer<typeof SpanBatchEnvelope>;
  try {
    envelope = SpanBatchEnvelope.parse(JSON.parse(extracted.reduced));
  } catch {
    return null;
  }
  if (
    envelope.echo !== false ||
    envelope.spans.length !== extracted.attributesJson.length ||
    envelope.spans.length === 0
  )
    return null;
  checkSpanCount(envelope.spans.length, ctx.limits);
  const spans = envelope.spans.map((item) => fromWire('span', item) as Span);
  try {
    const stored = await ctx.store.addSpansWithAttributesJson(spans, extracted.attributesJson);
    return stored === null ? null : insertedIndexes(spans, stored);
  } catch (error) {
    if (ValidationError.isInstance(error)) return null;
    throw error;
  }
}

/** Routes #24 to #27 of reference §3.3, plus the batch extensions `POST /spans/batch` and `POST /spans/next/batch`. */
export function registerSpanRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const P = API_PREFIX;

  app.post(`${P}/spans`, async (request, reply) => {
    const span = parseWireAt(Span, 'span', bodyObject(request.body, 'span', false), '', 'span');
    checkAttributeCount(Object.keys(span.attributes).length, 'span', ctx.limits);
    const stored = await ctx.store.addSpan(span);
    return sendJson(reply, 201, stored === null ? null : toWire('span', stored));
  });

  app.post(SPAN_BATCH_ROUTE, async (request, reply) => {
    const body = request.body instanceof JsonText ? request.body.text : null;
    const fast = body === null ? null : await addSpansKeepingAttributeText(ctx, body);
    if (fast) return sendJson(reply, 201, { inserted: fast });
    const envelope = parseEnvelope(
      SpanBatchEnvelope,
      bodyObject(body === null ? request.body : parseJsonBody(body), 'span batch', false),
      'span batch',
    );
    // The store validates every span before it writes any (the hottest route, so only once); when it refuses one, zod
    // names the bad field in wire spelling (`spans.3.sequence_id`).
    checkSpanCount(envelope.spans.length, ctx.limits);
    const spans = envelope.spans.map((item) => fromWire('span', item) as Span);
    spans.forEach((span, i) => {
      if (isRecord(span.attributes)) checkAttributeCount(Object.keys(span.attributes).length, `spans.${i}`, ctx.limits);
    });
    let stored: Span[] = [];
    try {
      if (spans.length > 0) stored = await ctx.store.addSpans(spans);
    } catch (error) {
      if (ValidationError.isInstance(error))
        envelope.spans.forEach((item, i) => parseWireAt(Span, 'span', item, `spans.${i}`, 'span batch'));
      throw error;
    }
    if (envelope.echo !== false) return sendJson(reply, 201, toWire('span', stored));
    return sendJson(reply, 201, { inserted: insertedIndexes(spans, stored) });
  });

  app.get(`${P}/spans`, (request, reply) => answerSpanQuery(ctx, reply, normalizeQuery(request.query, [])));
  app.post(`${P}/spans/search`, (request, reply) =>
    answerSpanQuery(ctx, reply, bodyObject(request.body, 'span query', false)),
  );

  app.post(`${P}/spans/next`, async (request, reply) => {
    const body = parseEnvelope(
      NextSequenceBody,
      bodyObject(request.body, 'sequence id request', false),
      'sequence id request',
    );
    const sequenceId = await ctx.store.getNextSpanSequenceId(body.rollout_id, body.attempt_id);
    return sendJson(reply, 200, { sequence_id: sequenceId });
  });

  app.post(`${P}/spans/next/batch`, async (request, reply) => {
    const body = parseEnvelope(
      NextSequenceBatchBody,
      bodyObject(request.body, 'sequence id batch', false),
      'sequence id batch',
    );
    const ids = body.pairs.length === 0 ? [] : await ctx.store.getNextSpanSequenceIds(body.pairs);
    return sendJson(reply, 200, { sequence_ids: ids });
  });
}
