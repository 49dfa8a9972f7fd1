import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import { ValidationError } from '@agl/core/errors';
import { parseWire, type WireShape } from '@agl/core/schema';
import type { Clock, LightningStore } from '@agl/core/store';
import type { RequestLimits } from './request-limits';
import type { RolloutSummaries } from './routes/ext-rollout-summaries';
import type { ReleaseTrigger } from '../releases/release-trigger';

/** What every route module gets. */
export interface RouteContext {
  store: LightningStore;
  /** Rollout summaries (reward, feedback, duration) of the ext routes; told of every span write through `store`. */
  summaries: RolloutSummaries;
  /** How many writes went through `store` so far (answer caches key on it); absent: every answer is computed afresh. */
  writes?: () => number;
  clock: Clock;
  /** Longest server-side wait of one `POST /waits/rollouts`, in seconds. */
  maxWaitSeconds: number;
  /** Resolves when the server starts closing, so long polls can answer early. */
  closing: Promise<void>;
  /** What one request may cost (body sizes, values, spans, attributes). */
  limits: RequestLimits;
  /** What the server serves, for people (`GET /ext/info`). */
  storeLabel?: string | null;
  /** Evaluates running releases after each batch of recorded results. */
  releases?: ReleaseTrigger;
}

/** Prefix of the AGL 0.3 REST routes. */
export const API_PREFIX = '/v1/agl';

/** The span batch route's path; its JSON body reaches it as {@link JsonText}. */
export const SPAN_BATCH_ROUTE = `${API_PREFIX}/spans/batch`;

/** Sends `value` as JSON with `status` (`null` is sent as the JSON literal `null`). */
export function sendJson(reply: FastifyReply, status: number, value: unknown): FastifyReply {
  return sendJsonText(reply, status, JSON.stringify(value ?? null));
}

/** A JSON request body handed to its route unparsed (see the span batch route). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** `JSON.parse` of a request body; malformed JSON is a 400 that says so. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ValidationError(
      `Malformed JSON body: ${(error as Error).message}. Send a valid JSON document with snake_case field names.`,
      [{ path: '(body)', message: 'malformed JSON' }],
      { status: 400 },
    );
  }
}

/** Sends JSON text that is already serialised. */
export function sendJsonText(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(text);
}

/**
 * `parseWire` for an item nested in a request body: error paths get `prefix` (e.g. `rollouts.2`) so the detail names
 * the exact wire field.
 */
export function parseWireAt<S extends z.ZodType>(
  schema: S,
  shape: WireShape,
  value: unknown,
  prefix: string,
  what: string,
): z.infer<S> {
  try {
    return parseWire(schema, shape, value, what);
  } catch (error) {
    if (!ValidationError.isInstance(error) || prefix === '') throw error;
    const issues = error.issues.map((issue) => ({ ...issue, path: issue.path ? `${prefix}.${issue.path}` : prefix }));
    const shown = issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`);
    throw new ValidationError(
      `Invalid ${what}: ${shown.join('; ')}${issues.length > 3 ? ` (+${issues.length - 3} more)` : ''}`,
      issues,
      {
        status: error.status,
      },
    );
  }
}
