// The async twin of ../engine/queries.ts (same filters, sorting and pagination, through the pure helpers of filter.ts).
import type { Attempt, AttemptedRollout, ResourcesUpdate, Rollout, Span, Worker } from '@agl/core/schema';
import type {
  PageOptions,
  PaginatedResult,
  QueryResourcesOptions,
  QueryRolloutsOptions,
  QueryWorkersOptions,
} from '@agl/core/store';
import { compileFilter, paginate, resolveSortField, sortItems, type FilterSpec } from '../engine/filter';
import {
  QueryAttemptsInput,
  QueryResourcesInput,
  QueryRolloutsInput,
  QuerySpansInput,
  QueryWorkersInput,
  parseApi,
} from '../engine/input';
import { spanFilter, type SpanQuery } from '../engine/queries';
import type { AsyncStorageTx } from './async-storage';

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
export async function withLatestAttempts(
  storage: AsyncStorageTx,
  rollouts: Rollout[],
): Promise<Array<Rollout | AttemptedRollout>> {
  if (rollouts.length === 0) return [];
  const latest = await storage.getLatestAttempts(rollouts.map((r) => r.rolloutId));
  return rollouts.map((r) => {
    const attempt = latest.get(r.rolloutId);
    return attempt ? { ...r, attempt } : r;
  });
}

/** `queryRollouts`: AGL 0.3 filters, the new names beating the deprecated aliases. */
export async function queryRollouts(
  storage: AsyncStorageTx,
  options: unknown,
): Promise<PaginatedResult<Rollout | AttemptedRollout>> {
  const o = parseApi(QueryRolloutsInput, options ?? {}, 'queryRollouts options') as QueryRolloutsOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  const statuses = o.statusIn ?? o.status ?? null;
  const ids = o.rolloutIdIn ?? o.rolloutIds ?? null;
  const sortField = o.sortBy ? resolveSortField(o.sortBy, ROLLOUT_FIELDS, 'Rollout') : null;
  const native = await storage.pageRollouts?.({
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
    return {
      items: await withLatestAttempts(storage, native.items),
      total: native.total,
      limit: o.limit,
      offset: o.offset,
    };
  }
  const narrow = o.filterLogic === 'and' ? { statuses: statuses ?? undefined, ids: ids ?? undefined } : undefined;
  const candidates = await storage.listRollouts(narrow);
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
  return { ...page, items: await withLatestAttempts(storage, page.items) };
}

/** `queryAttempts`: by sequence id; an unknown rollout gives an empty page (AGL quirk 6, kept). */
export async function queryAttempts(storage: AsyncStorageTx, options: unknown): Promise<PaginatedResult<Attempt>> {
  const o = parseApi(QueryAttemptsInput, options, 'queryAttempts options');
  return run(await storage.listAttempts(o.rolloutId), {}, o, ATTEMPT_FIELDS, 'Attempt', 'sequenceId');
}

/** `querySpans`: the rollout (and attempt) scope is always ANDed; `'latest'` resolves to the latest attempt. */
export async function querySpans(storage: AsyncStorageTx, options: unknown): Promise<PaginatedResult<Span>> {
  const o = parseApi(QuerySpansInput, options, 'querySpans options') as SpanQuery;
  let attemptId = o.attemptId ?? null;
  if (attemptId === 'latest') {
    const latest = await storage.getLatestAttempt(o.rolloutId);
    if (!latest) {
      resolveSortField(o.sortBy ?? 'sequenceId', SPAN_FIELDS, 'Span');
      return { items: [], total: 0, limit: o.limit, offset: o.offset };
    }
    attemptId = latest.attemptId;
  }
  return run(await storage.listSpans(o.rolloutId, attemptId), spanFilter(o), o, SPAN_FIELDS, 'Span', 'sequenceId');
}

/** `queryWorkers`. */
export async function queryWorkers(storage: AsyncStorageTx, options: unknown): Promise<PaginatedResult<Worker>> {
  const o = parseApi(QueryWorkersInput, options ?? {}, 'queryWorkers options') as QueryWorkersOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  return run(
    await storage.listWorkers(),
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
export async function queryResources(
  storage: AsyncStorageTx,
  options: unknown,
): Promise<PaginatedResult<ResourcesUpdate>> {
  const o = parseApi(QueryResourcesInput, options ?? {}, 'queryResources options') as QueryResourcesOptions &
    Required<Pick<PageOptions, 'limit' | 'offset' | 'sortOrder'>>;
  return run(
    await storage.listResources(),
    { fields: { resourcesId: { exact: o.resourcesId ?? null, contains: o.resourcesIdContains ?? null } } },
    o,
    RESOURCES_FIELDS,
    'ResourcesUpdate',
    null,
  );
}
