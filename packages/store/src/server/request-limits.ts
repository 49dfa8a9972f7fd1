import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '@agl/core/errors';
import { MAX_JSON_DEPTH, jsonStructure } from '@agl/core/schema';
import { API_PREFIX, JsonText, SPAN_BATCH_ROUTE, parseJsonBody } from './route-context';
import { tooManyValues, type IngestLimits } from '../ingest-limits';
import { utf8Text } from '@agl/core/net';

/**
 * Default largest body of the ingest routes (spans, events, OTLP, rollout enqueue), and of inflated OTLP: 16 MiB. The
 * largest valid span batch of that size holds the event loop for about half a second on a loaded 2-core machine;
 * 32 MiB (the default before) held it past the one-second budget.
 */
export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;
/** Default largest body of every other route (searches, updates, control): 1 MiB. */
export const DEFAULT_CONTROL_BODY_LIMIT = 1024 * 1024;
/** Default largest number of JSON values (about one per array item or object member) in one request body. */
export const DEFAULT_MAX_JSON_VALUES = 150_000;
/** Default largest number of spans in one request (span batch, OTLP export). */
export const DEFAULT_MAX_SPANS_PER_REQUEST = 10_000;
/** Default largest number of attributes of one span (after OTLP key-value lists are flattened). */
export const DEFAULT_MAX_ATTRIBUTES_PER_SPAN = 1_000;

/** What one request may cost; see the store README ("Limits") for why these defaults. */
export interface RequestLimits extends IngestLimits {
  /** Largest body of the ingest routes, and of an OTLP body once inflated, in bytes. */
  bodyLimit: number;
  /** Largest body of every other route, in bytes. */
  controlBodyLimit: number;
}

/** The routes whose bodies may be large: span and OTLP ingest, events, and rollout enqueues (task inputs). */
const INGEST_ROUTES = new Set([
  `POST ${API_PREFIX}/spans`,
  `POST ${SPAN_BATCH_ROUTE}`,
  `POST ${API_PREFIX}/spans/next/batch`,
  `POST ${API_PREFIX}/rollouts`,
  `POST ${API_PREFIX}/queues/rollouts/enqueue`,
  `POST ${API_PREFIX}/records`,
  'POST /api/rollouts/:rollout_id/attempt/:attempt_id/events',
  'POST /v1/traces',
]);

/** True for a route that takes the large {@link RequestLimits.bodyLimit}. */
export function isIngestRoute(method: string, url: string): boolean {
  return INGEST_ROUTES.has(`${method} ${url}`);
}

/** The body limit of the route that answers `request`. */
export function routeBodyLimit(request: FastifyRequest | undefined, limits: RequestLimits): number {
  return request?.routeOptions.bodyLimit ?? limits.bodyLimit;
}

/**
 * Gives every route registered after this call its body limit (large for ingest, small for the rest), and parses JSON
 * bodies only after counting their structure: a body nested deeper than {@link MAX_JSON_DEPTH} is a 400, one with
 * more values than `maxJsonValues` a 413, both before `JSON.parse` could spend a second or a gigabyte on it.
 */
export function registerRequestLimits(app: FastifyInstance, limits: RequestLimits): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    route.bodyLimit ??= methods.some((m) => isIngestRoute(m, route.url ?? ''))
      ? limits.bodyLimit
      : limits.controlBodyLimit;
  });
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const text = utf8Text(body as Buffer);
    if (text.trim() === '') return done(null, undefined);
    try {
      checkJsonStructure(text, limits.maxJsonValues);
      // Span batches are parsed by their route, which keeps attribute maps as text where the store allows it.
      done(null, request.routeOptions.url === SPAN_BATCH_ROUTE ? new JsonText(text) : parseJsonBody(text));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/** Refuses a JSON text nested deeper than {@link MAX_JSON_DEPTH} (400) or holding more than `maxValues` values (413). */
export function checkJsonStructure(text: string, maxValues: number): void {
  const { depth, values } = jsonStructure(text, maxValues + 1);
  if (values > maxValues) throw tooManyValues(maxValues);
  if (depth > MAX_JSON_DEPTH) {
    const detail = `JSON body is nested ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}. Send flatter data (e.g. a JSON string for deep structures).`;
    throw new ValidationError(detail, [{ path: '(body)', message: 'nested too deeply' }], { status: 400 });
  }
}
