import {
  Attempt,
  Rollout,
  TERMINAL_STATUSES,
  Worker,
  type AttemptedRollout,
  type ResourcesUpdate,
  type Span,
} from '@agl/core/schema';
import type {
  PageOptions,
  PaginatedResult,
  QueryResourcesOptions,
  QueryRolloutsOptions,
  QuerySpansOptions,
  QueryWorkersOptions,
  StoreStatistics,
} from '@agl/core/store';
import { compileFilter, isEmptyFilter, paginate, resolveSortField, sortItems, type FilterSpec } from './filter';
import {
  QueryAttemptsInput,
  QueryResourcesInput,
  QueryRolloutsInput,
  QuerySpansInput,
  QueryWorkersInput,
  AttemptRefsInput,
  SpanNameInput,
  parseApi,
} from './input';
import { attemptKey } from './rules';
import { call, type Rule } from './storage-ops';

/** Sortable fields: every field of the model (AGL 0.3 §3.2), spans and resources below only their scalar ones. */
const ROLLOUT_FIELDS = Object.keys(Rollout.shape);
const ATTEMPT_FIELDS = Object.keys(Attempt.shape);
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
const WORKER_FIELDS = Object.keys(Worker.shape);
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
export function* withLatestAttempts(rollouts: Rollout[]): Rule<Array<Rollout | AttemptedRollout>> {
  if (rollouts.length === 0) return [];
  const latest = yield* call(
    'getLatestAttempts',
    rollouts.map((r) => r.rolloutId),
  );
  return rollouts.map((r) => {
    const attempt = latest.get(r.rolloutId);
    return attempt ? { ...r, attempt } : r;
  });
}

/** `queryRollouts`: AGL 0.3 filters, the new names beating the deprecated aliases. */
export function* queryRollouts(options: unknown): Rule<PaginatedResult<Rollout | AttemptedRollout>> {
  const o = parseApi(QueryRolloutsInput, options ?? {}, 'queryRollouts options') as QueryRolloutsOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  const statuses = o.statusIn ?? o.status ?? null;
  const ids = o.rolloutIdIn ?? o.rolloutIds ?? null;
  const sortField = o.sortBy ? resolveSortField(o.sortBy, ROLLOUT_FIELDS, 'Rollout') : null;
  const native = yield* call('pageRollouts', {
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
    return { items: yield* withLatestAttempts(native.items), total: native.total, limit: o.limit, offset: o.offset };
  }
  const narrow = o.filterLogic === 'and' ? { statuses: statuses ?? undefined, ids: ids ?? undefined } : undefined;
  const candidates = yield* call('listRollouts', narrow);
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
  return { ...page, items: yield* withLatestAttempts(page.items) };
}

/** `queryAttempts`: by sequence id; an unknown rollout gives an empty page (AGL quirk 6, kept). */
export function* queryAttempts(options: unknown): Rule<PaginatedResult<Attempt>> {
  const o = parseApi(QueryAttemptsInput, options, 'queryAttempts options');
  return run(yield* call('listAttempts', o.rolloutId), {}, o, ATTEMPT_FIELDS, 'Attempt', 'sequenceId');
}

/** Validated `querySpans` options. */
export type SpanQuery = QuerySpansOptions & Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;

/** Resolves `'latest'`; undefined when the rollout has no attempt (the sort field is still checked then). */
function* attemptOf(o: SpanQuery): Rule<string | null | undefined> {
  if (o.attemptId !== 'latest') return o.attemptId ?? null;
  const latest = yield* call('getLatestAttempt', o.rolloutId);
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
export function* querySpans(options: unknown): Rule<PaginatedResult<Span>> {
  const o = parseSpanQuery(options);
  const attemptId = yield* attemptOf(o);
  if (attemptId === undefined) return { items: [], total: 0, limit: o.limit, offset: o.offset };
  return run(yield* call('listSpans', o.rolloutId, attemptId), spanFilter(o), o, SPAN_FIELDS, 'Span', 'sequenceId');
}

/**
 * `querySpans` answered with the stored JSON text of each span (camelCase) instead of objects, when the storage keeps
 * JSON text and the query only scopes, sorts by sequence id and pages; null otherwise (filters, another sort field),
 * and the caller runs `querySpans`. Same validation, order and page as `querySpans`.
 */
export function* querySpanDocs(options: unknown): Rule<PaginatedResult<string> | null> {
  const o = parseSpanQuery(options);
  const sortField = o.sortBy ? resolveSortField(o.sortBy, SPAN_FIELDS, 'Span') : 'sequenceId';
  if (sortField !== 'sequenceId' || !isEmptyFilter(spanFilter(o))) return null;
  const attemptId = yield* attemptOf(o);
  if (attemptId === undefined) return { items: [], total: 0, limit: o.limit, offset: o.offset };
  const docs = yield* call('listSpanDocs', o.rolloutId, attemptId);
  if (docs === null) return null;
  const page = paginate(sortItems(docs, sortField, o.sortOrder), o.limit, o.offset);
  return { ...page, items: page.items.map((d) => d.doc) };
}

/** Attempts per `listNamedSpansOfAttempts` call (one SQL statement each on the SQL storages). */
const ATTEMPTS_PER_READ = 500;

/**
 * `querySpansOfAttempts`: the spans named `name` of each attempt, one list per attempt in the order asked, each sorted
 * as `querySpans` sorts by sequence id; unknown rollouts and attempts get an empty list. One storage call per
 * {@link ATTEMPTS_PER_READ} distinct attempts.
 */
export function* querySpansOfAttempts(attempts: unknown, options: unknown): Rule<Span[][]> {
  const refs = parseApi(AttemptRefsInput, attempts, 'querySpansOfAttempts attempts');
  const { name } = parseApi(SpanNameInput, options, 'querySpansOfAttempts options');
  const distinct = [...new Map(refs.map((a) => [attemptKey(a), a])).values()];
  const found = new Map<string, Span[]>();
  for (let i = 0; i < distinct.length; i += ATTEMPTS_PER_READ) {
    for (const span of yield* call('listNamedSpansOfAttempts', distinct.slice(i, i + ATTEMPTS_PER_READ), name)) {
      const key = attemptKey(span);
      const list = found.get(key);
      if (list) list.push(span);
      else found.set(key, [span]);
    }
  }
  const sorted = new Map([...found].map(([key, spans]) => [key, sortItems(spans, 'sequenceId')]));
  return refs.map((a) => sorted.get(attemptKey(a)) ?? []);
}

/** `queryWorkers`. */
export function* queryWorkers(options: unknown): Rule<PaginatedResult<Worker>> {
  const o = parseApi(QueryWorkersInput, options ?? {}, 'queryWorkers options') as QueryWorkersOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  return run(
    yield* call('listWorkers'),
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
export function* queryResources(options: unknown): Rule<PaginatedResult<ResourcesUpdate>> {
  const o = parseApi(QueryResourcesInput, options ?? {}, 'queryResources options') as QueryResourcesOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  return run(
    yield* call('listResources'),
    { fields: { resourcesId: { exact: o.resourcesId ?? null, contains: o.resourcesIdContains ?? null } } },
    o,
    RESOURCES_FIELDS,
    'ResourcesUpdate',
    null,
  );
}

/** One rollout with its latest attempt, or null. */
export function* getRollout(rolloutId: string): Rule<Rollout | AttemptedRollout | null> {
  const rollout = yield* call('getRollout', rolloutId);
  return rollout ? (yield* withLatestAttempts([rollout]))[0]! : null;
}

/** The latest resources, or null. */
export function* latestResources(): Rule<ResourcesUpdate | null> {
  const id = yield* call('getLatestResourcesId');
  return id === null ? null : yield* call('getResources', id);
}

/** The rollouts among `rolloutIds` that finished, in the order asked. */
export function* finishedRollouts(rolloutIds: readonly string[]): Rule<Rollout[]> {
  const finished = yield* call('listRollouts', { ids: rolloutIds, statuses: TERMINAL_STATUSES });
  const byId = new Map(finished.map((r) => [r.rolloutId, r]));
  return rolloutIds.flatMap((id) => byId.get(id) ?? []);
}

/** `statistics()`: the row counts; `name` and `uptime` come from the store. */
export function* statisticsRule(name: string, uptime: number): Rule<StoreStatistics> {
  return {
    name,
    totalRollouts: yield* call('countRollouts'),
    totalAttempts: yield* call('countAttempts'),
    totalSpans: yield* call('countSpans'),
    totalResources: yield* call('countResources'),
    totalWorkers: yield* call('countWorkers'),
    uptime,
  };
}
