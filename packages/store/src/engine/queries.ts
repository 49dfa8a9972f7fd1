import type { Attempt, AttemptedRollout, ResourcesUpdate, Rollout, Span, Worker } from '@agl/core/schema';
import type {
  PageOptions,
  PaginatedResult,
  QueryResourcesOptions,
  QueryRolloutsOptions,
  QuerySpansOptions,
  QueryWorkersOptions,
} from '@agl/core/store';
import { compileFilter, isEmptyFilter, paginate, resolveSortField, sortItems, type FilterSpec } from './filter';
import {
  QueryAttemptsInput,
  QueryResourcesInput,
  QueryRolloutsInput,
  QuerySpansInput,
  QueryWorkersInput,
  parseApi,
} from './input';
import type { StoreStorage } from './storage';

const ROLLOUT_FIELDS = [
  'rolloutId',
  'input',
  'startTime',
  'endTime',
  'mode',
  'resourcesId',
  'status',
  'config',
  'metadata',
];
const ATTEMPT_FIELDS = [
  'rolloutId',
  'attemptId',
  'sequenceId',
  'startTime',
  'endTime',
  'status',
  'workerId',
  'lastHeartbeatTime',
  'metadata',
];
const SPAN_FIELDS = [
  'rolloutId',
  'attemptId',
  'sequenceId',
  'traceId',
  'spanId',
  'parentId',
  'name',
  'status',
  'startTime',
  'endTime',
];
const WORKER_FIELDS = [
  'workerId',
  'status',
  'heartbeatStats',
  'lastHeartbeatTime',
  'lastDequeueTime',
  'lastBusyTime',
  'lastIdleTime',
  'currentRolloutId',
  'currentAttemptId',
];
const RESOURCES_FIELDS = ['resourcesId', 'createTime', 'updateTime', 'version'];

function run<T extends object>(
  items: T[],
  filter: FilterSpec,
  page: Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>> & { sortBy?: string | null | undefined },
  fields: readonly string[],
  what: string,
  defaultSort: string | null,
): PaginatedResult<T> {
  const field = page.sortBy ? resolveSortField(page.sortBy, fields, what) : defaultSort;
  const predicate = compileFilter(filter);
  const matched = items.filter(predicate);
  return paginate(sortItems(matched, field, page.sortOrder), page.limit, page.offset);
}

/** Attaches each rollout's latest attempt (one batched lookup). */
export function withLatestAttempts(storage: StoreStorage, rollouts: Rollout[]): Array<Rollout | AttemptedRollout> {
  if (rollouts.length === 0) return [];
  const latest = storage.getLatestAttempts(rollouts.map((r) => r.rolloutId));
  return rollouts.map((r) => {
    const attempt = latest.get(r.rolloutId);
    return attempt ? { ...r, attempt } : r;
  });
}

/** `queryRollouts`: AGL 0.3 filters, the new names beating the deprecated aliases. */
export function queryRollouts(storage: StoreStorage, options: unknown): PaginatedResult<Rollout | AttemptedRollout> {
  const o = parseApi(QueryRolloutsInput, options ?? {}, 'queryRollouts options') as QueryRolloutsOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  const statuses = o.statusIn ?? o.status ?? null;
  const ids = o.rolloutIdIn ?? o.rolloutIds ?? null;
  const sortField = o.sortBy ? resolveSortField(o.sortBy, ROLLOUT_FIELDS, 'Rollout') : null;
  const native = storage.pageRollouts?.({
    statuses: statuses ?? undefined,
    ids: ids ?? undefined,
    idContains: o.rolloutIdContains ?? null,
    modes: o.modeIn ?? undefined,
    logic: o.filterLogic ?? 'and',
    sortField,
    order: o.sortOrder,
    limit: o.limit,
    offset: o.offset,
  });
  if (native) {
    return { items: withLatestAttempts(storage, native.items), total: native.total, limit: o.limit, offset: o.offset };
  }
  const narrow = o.filterLogic === 'and' ? { statuses: statuses ?? undefined, ids: ids ?? undefined } : undefined;
  const candidates = storage.listRollouts(narrow);
  const page = run(
    candidates,
    {
      logic: o.filterLogic,
      fields: {
        status: { within: statuses },
        rolloutId: { within: ids, contains: o.rolloutIdContains ?? null },
        mode: { within: o.modeIn ?? null },
      },
    },
    o,
    ROLLOUT_FIELDS,
    'Rollout',
    null,
  );
  return { ...page, items: withLatestAttempts(storage, page.items) };
}

/** `queryAttempts`: by sequence id; an unknown rollout gives an empty page (AGL quirk 6, kept). */
export function queryAttempts(storage: StoreStorage, options: unknown): PaginatedResult<Attempt> {
  const o = parseApi(QueryAttemptsInput, options, 'queryAttempts options');
  return run(storage.listAttempts(o.rolloutId), {}, o, ATTEMPT_FIELDS, 'Attempt', 'sequenceId');
}

/** Validated `querySpans` options. */
export type SpanQuery = QuerySpansOptions & Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;

/** Resolves `'latest'`; undefined when the rollout has no attempt (the sort field is still checked then). */
function attemptOf(storage: StoreStorage, o: SpanQuery): string | null | undefined {
  if (o.attemptId !== 'latest') return o.attemptId ?? null;
  const latest = storage.getLatestAttempt(o.rolloutId);
  if (!latest) resolveSortField(o.sortBy ?? 'sequenceId', SPAN_FIELDS, 'Span');
  return latest?.attemptId;
}

const parseSpanQuery = (options: unknown): SpanQuery =>
  parseApi(QuerySpansInput, options, 'querySpans options') as SpanQuery;

/** The filter conditions of a span query (the rollout and attempt scope is applied by the caller). */
export function spanFilter(o: SpanQuery): FilterSpec {
  return {
    logic: o.filterLogic,
    fields: {
      traceId: { exact: o.traceId, contains: o.traceIdContains },
      spanId: { exact: o.spanId, contains: o.spanIdContains },
      parentId: { exact: o.parentId, contains: o.parentIdContains },
      name: { exact: o.name, contains: o.nameContains },
    },
  };
}

/** `querySpans`: the rollout (and attempt) scope is always ANDed; `'latest'` resolves to the latest attempt. */
export function querySpans(storage: StoreStorage, options: unknown): PaginatedResult<Span> {
  const o = parseSpanQuery(options);
  const attemptId = attemptOf(storage, o);
  if (attemptId === undefined) return { items: [], total: 0, limit: o.limit, offset: o.offset };
  return run(storage.listSpans(o.rolloutId, attemptId), spanFilter(o), o, SPAN_FIELDS, 'Span', 'sequenceId');
}

/**
 * `querySpans` answered with the stored JSON text of each span (camelCase) instead of objects, when the storage keeps
 * JSON text and the query only scopes, sorts by sequence id and pages; null otherwise (filters, another sort field),
 * and the caller runs `querySpans`. Same validation, order and page as `querySpans`.
 */
export function querySpanDocs(storage: StoreStorage, options: unknown): PaginatedResult<string> | null {
  if (!storage.listSpanDocs) return null;
  const o = parseSpanQuery(options);
  const sortField = o.sortBy ? resolveSortField(o.sortBy, SPAN_FIELDS, 'Span') : 'sequenceId';
  if (sortField !== 'sequenceId' || !isEmptyFilter(spanFilter(o))) return null;
  const attemptId = attemptOf(storage, o);
  if (attemptId === undefined) return { items: [], total: 0, limit: o.limit, offset: o.offset };
  const docs = storage.listSpanDocs(o.rolloutId, attemptId);
  if (docs === null) return null;
  const page = paginate(sortItems(docs, sortField, o.sortOrder), o.limit, o.offset);
  return { ...page, items: page.items.map((d) => d.doc) };
}

/** `queryWorkers`. */
export function queryWorkers(storage: StoreStorage, options: unknown): PaginatedResult<Worker> {
  const o = parseApi(QueryWorkersInput, options ?? {}, 'queryWorkers options') as QueryWorkersOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  return run(
    storage.listWorkers(),
    {
      logic: o.filterLogic,
      fields: { status: { within: o.statusIn ?? null }, workerId: { contains: o.workerIdContains ?? null } },
    },
    o,
    WORKER_FIELDS,
    'Worker',
    null,
  );
}

/** `queryResources`: both id filters ANDed. */
export function queryResources(storage: StoreStorage, options: unknown): PaginatedResult<ResourcesUpdate> {
  const o = parseApi(QueryResourcesInput, options ?? {}, 'queryResources options') as QueryResourcesOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  return run(
    storage.listResources(),
    { fields: { resourcesId: { exact: o.resourcesId ?? null, contains: o.resourcesIdContains ?? null } } },
    o,
    RESOURCES_FIELDS,
    'ResourcesUpdate',
    null,
  );
}
