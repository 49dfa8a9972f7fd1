import { z } from 'zod';
import { AttemptStatus, RolloutMode, RolloutStatus, WorkerStatus, camelToSnake, snakeToCamel } from '@agl/core/schema';
import { ValidationError, type ValidationIssue } from '@agl/core/errors';
import type { PageOptions } from '@agl/core/store';
import { fieldError } from './http-errors';

/** Fields a paginated query may sort by, per item type (AGL 0.3 §3.2: the model fields). */
export const SORT_FIELDS = {
  rollout: ['rollout_id', 'input', 'start_time', 'end_time', 'mode', 'resources_id', 'status', 'config', 'metadata'],
  attempt: [
    'rollout_id',
    'attempt_id',
    'sequence_id',
    'start_time',
    'end_time',
    'status',
    'worker_id',
    'last_heartbeat_time',
    'metadata',
  ],
  worker: [
    'worker_id',
    'status',
    'heartbeat_stats',
    'last_heartbeat_time',
    'last_dequeue_time',
    'last_busy_time',
    'last_idle_time',
    'current_rollout_id',
    'current_attempt_id',
  ],
  resources: ['resources_id', 'create_time', 'update_time', 'version', 'resources'],
  span: [
    'rollout_id',
    'attempt_id',
    'sequence_id',
    'trace_id',
    'span_id',
    'parent_id',
    'name',
    'status',
    'attributes',
    'events',
    'links',
    'start_time',
    'end_time',
    'context',
    'parent',
    'resource',
  ],
} as const;
/** An item type with sortable fields. */
export type SortTarget = keyof typeof SORT_FIELDS;

const nullableString = z.string().nullable().optional();
const stringList = z.array(z.string()).nullable().optional();

const pageFields = {
  limit: z.number().int().optional(),
  offset: z.number().int().optional(),
  sort_by: z.string().nullable().optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
};
const filterLogic = { filter_logic: z.enum(['and', 'or']).optional() };

/** `GET /rollouts` and `POST /rollouts/search`. */
export const RolloutQueryBody = z.strictObject({
  ...pageFields,
  ...filterLogic,
  status_in: z.array(RolloutStatus).nullable().optional(),
  rollout_id_in: stringList,
  rollout_id_contains: nullableString,
  mode_in: z.array(RolloutMode).nullable().optional(),
  status: z.array(RolloutStatus).nullable().optional(),
  rollout_ids: stringList,
});

/** `GET /rollouts/{id}/attempts` and its `/search` variant. */
export const AttemptQueryBody = z.strictObject({ ...pageFields });

/** `GET /workers` and `POST /workers/search`. */
export const WorkerQueryBody = z.strictObject({
  ...pageFields,
  ...filterLogic,
  status_in: z.array(WorkerStatus).nullable().optional(),
  worker_id_contains: nullableString,
});

/** `GET /resources`. */
export const ResourcesQueryBody = z.strictObject({
  ...pageFields,
  resources_id: nullableString,
  resources_id_contains: nullableString,
});

/** `GET /spans` and `POST /spans/search`. */
export const SpanQueryBody = z.strictObject({
  ...pageFields,
  ...filterLogic,
  rollout_id: z.string().min(1),
  attempt_id: nullableString,
  trace_id: nullableString,
  trace_id_contains: nullableString,
  span_id: nullableString,
  span_id_contains: nullableString,
  parent_id: nullableString,
  parent_id_contains: nullableString,
  name: nullableString,
  name_contains: nullableString,
});

/** `POST /queues/rollouts/dequeue`. */
export const DequeueBody = z.strictObject({ limit: z.number().int().optional(), worker_id: nullableString });
/** `POST /rollouts/{id}/attempts`. */
export const StartAttemptBody = z.strictObject({ worker_id: nullableString });
/** `POST /spans/next`. */
export const NextSequenceBody = z.strictObject({ rollout_id: z.string().min(1), attempt_id: z.string().min(1) });
/** `POST /spans/next/batch` (AGL extension). */
export const NextSequenceBatchBody = z.strictObject({
  pairs: z.array(z.tuple([z.string().min(1), z.string().min(1)])),
});
/** `POST /waits/rollouts`. */
export const WaitBody = z.strictObject({
  rollout_ids: z.array(z.string()),
  timeout: z.number().nullable().optional(),
});
/** `POST /waits/queue` (AGL extension): seconds to wait at most (the server caps it). */
export const QueueWaitBody = z.strictObject({ timeout: z.number().min(0).nullable().optional() });
/** `POST /workers/{id}` (heartbeat). */
export const WorkerUpdateBody = z.strictObject({ heartbeat_stats: z.record(z.string(), z.unknown()).optional() });
/** `POST /rollouts/{id}/attempts/{aid}`: the keys that may be present (none may be null). */
export const AttemptUpdateBody = z.strictObject({
  status: AttemptStatus.optional(),
  worker_id: z.string().optional(),
  last_heartbeat_time: z.number().optional(),
  end_time: z.number().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
/** `POST /rollouts` (start): the worker and, for a recorder that chooses them, the ids and start time. */
export const StartRolloutIdsBody = z.object({
  worker_id: z.string().nullable().optional(),
  rollout_id: z.string().optional(),
  attempt_id: z.string().optional(),
  start_time: z.number().optional(),
});
/** AGL 1.0 `EventCreate`. */
export const EventCreateBody = z.strictObject({
  event_type: z.string().min(1),
  data: z.record(z.string(), z.unknown()).default({}),
});

function issuePath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

function hint(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return `${issue.message}; remove ${issue.keys.length === 1 ? 'it' : 'them'} (field names are snake_case)`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined)
    return `required field is missing; add it (${issue.message})`;
  return issue.message;
}

/**
 * Validates a request envelope that is already in wire spelling (snake_case). Throws a 422 {@link ValidationError}
 * whose detail names each bad field.
 */
export function parseEnvelope<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    path: issuePath(issue.path),
    message: hint(issue),
  }));
  const shown = issues.slice(0, 3).map((i) => `${i.path || '(body)'}: ${i.message}`);
  throw new ValidationError(
    `Invalid ${what}: ${shown.join('; ')}${issues.length > 3 ? ` (+${issues.length - 3} more)` : ''}`,
    issues,
    { status: 422 },
  );
}

/**
 * Turns a query string object into a body-like object: repeated keys become arrays, list parameters always become
 * arrays, and integer-looking `limit`/`offset` become numbers.
 */
export function normalizeQuery(query: unknown, listKeys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    let value: unknown = raw;
    if (listKeys.includes(key)) value = Array.isArray(raw) ? raw : [raw];
    else if (Array.isArray(raw)) value = raw[raw.length - 1];
    if ((key === 'limit' || key === 'offset') && typeof value === 'string' && /^-?\d+$/.test(value))
      value = Number(value);
    out[key] = value;
  }
  return out;
}

/**
 * AGL 0.3's pagination checks (400): `limit` must be > 0 or -1, `offset` ≥ 0, `sort_by` a field of the item type.
 * Returns the store's camelCase page options.
 */
export function pageOptions(
  body: { limit?: number; offset?: number; sort_by?: string | null; sort_order?: 'asc' | 'desc' },
  target: SortTarget,
  defaultSortBy: string | null = null,
): PageOptions {
  const limit = body.limit ?? -1;
  const offset = body.offset ?? 0;
  if (limit === 0 || limit < -1) {
    throw fieldError(
      'limit',
      `Limit must be greater than 0 or -1 for no limit (got ${limit}); send a positive integer or -1`,
      400,
    );
  }
  if (offset < 0) {
    throw fieldError('offset', `Offset must be greater than or equal to 0 (got ${offset})`, 400);
  }
  const options: PageOptions = { limit, offset, sortOrder: body.sort_order ?? 'asc' };
  const sortBy = body.sort_by ?? defaultSortBy;
  if (sortBy !== null && sortBy !== undefined) {
    const wire = camelToSnake(sortBy);
    const allowed: readonly string[] = SORT_FIELDS[target];
    if (!allowed.includes(wire)) {
      throw new ValidationError(
        `Invalid sort_by: ${sortBy}, allowed fields are: ${allowed.join(', ')}. Use one of these snake_case names.`,
        [{ path: 'sort_by', message: `must be one of ${allowed.join(', ')}` }],
        { status: 400 },
      );
    }
    options.sortBy = snakeToCamel(wire);
  }
  return options;
}

/** `rollout_id_in` → `rolloutIdIn`, as a type. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;
type QueryFilters<B extends { filter_logic?: 'and' | 'or' }, K extends keyof B & string> = {
  [F in K as CamelCase<F>]: Exclude<B[F], undefined> | null;
} & { filterLogic: 'and' | 'or' };

/**
 * A parsed query body's filters as the store's camelCase options: each named field (null when absent) and
 * `filterLogic` (default `and`).
 */
export function queryFilters<B extends { filter_logic?: 'and' | 'or' }, K extends keyof B & string>(
  body: B,
  fields: readonly K[],
): QueryFilters<B, K> {
  const filters: Record<string, unknown> = { filterLogic: body.filter_logic ?? 'and' };
  for (const field of fields) filters[snakeToCamel(field)] = body[field] ?? null;
  return filters as QueryFilters<B, K>;
}

/** 400 for an explicit `null` where AGL forbids it (`status`, `config`, `worker_id`, `heartbeat_stats`, ...). */
export function rejectNulls(body: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) {
    if (Object.hasOwn(body, field) && body[field] === null) {
      throw fieldError(
        field,
        `${field} is invalid; it cannot be a null value. Omit the key to leave it unchanged`,
        400,
      );
    }
  }
}

/** The body as a plain object (`undefined`/`null` → `{}`); anything else is a 422 naming the body. */
export function bodyObject(body: unknown, what: string, allowMissing = true): Record<string, unknown> {
  if ((body === undefined || body === null) && allowMissing) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ValidationError(
      `Invalid ${what}: (body): expected a JSON object, got ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body}`,
      [{ path: '', message: 'expected a JSON object' }],
      { status: 422 },
    );
  }
  return body as Record<string, unknown>;
}
