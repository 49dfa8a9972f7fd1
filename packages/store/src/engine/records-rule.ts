import { AglError } from '@agl/core/errors';
import { idProblem } from '@agl/core/guards';
import type { JsonObject, JsonValue } from '@agl/core/schema';
import {
  applyRecords,
  ProductionRecord,
  startRequestOf,
  type ApplyRecordsResult,
  type LightningStore,
} from '@agl/core/store';
import { AttemptUpdateInput, parseApi, StartRolloutInput } from './input';
import { prepareSpans, type SpanSerializer } from './rule-store';
import { newAttemptRecord, newRolloutRecord, repeatedStart } from './rules';
import { updateAttemptRule, addSpansRule, type Plan, type PreparedSpans, type RuleContext } from './store-rules';
import { coalesceWrites } from './coalesced-writes';
import { call, type Rule } from './storage-ops';
import type { z } from 'zod';

/** A production record checked and made ready for {@link applyRecordsRule} (no storage touched yet). */
export type PreparedRecord =
  | { kind: 'start'; req: z.infer<typeof StartRolloutInput> }
  | { kind: 'spans'; prepared: PreparedSpans }
  | { kind: 'end'; rolloutId: string; attemptId: string; update: z.infer<typeof AttemptUpdateInput> };

const RUNNING = { status: 'running' } as const;

/**
 * Checks a recorder's batch for {@link applyRecordsRule}: each record against the production record schema and the
 * store method it stands for, spans prepared (and serialised) as `addSpans` does. Returns null when any record is
 * refused: the caller then applies the batch record by record (`applyRecords`), which reports each refusal.
 */
export function prepareRecords(
  records: readonly unknown[],
  serialize: SpanSerializer | undefined,
): PreparedRecord[] | null {
  const out: PreparedRecord[] = [];
  for (const raw of records) {
    const fast = fastPrepareRecord(raw, serialize);
    if (fast !== undefined) {
      if (fast !== null) out.push(fast);
      continue;
    }
    const parsed = ProductionRecord.safeParse(raw);
    if (!parsed.success) return null;
    const record = parsed.data;
    if (record.kind === 'start') {
      const req = StartRolloutInput.safeParse(startRequestOf(record));
      if (!req.success) return null;
      out.push({ kind: 'start', req: req.data });
    } else if (record.kind === 'spans') {
      if (record.spans.length > 0) out.push({ kind: 'spans', prepared: prepareSpans(record.spans, serialize) });
    } else {
      const update = parseApi(AttemptUpdateInput, { status: record.status, endTime: record.endTime }, 'end record');
      out.push({ kind: 'end', rolloutId: record.rolloutId, attemptId: record.attemptId, update });
    }
  }
  return out;
}

type Obj = Record<string, unknown>;

function isPlainObject(value: unknown): value is Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Whether `value` is plainly JSON (what `JSON.parse` gives: strings, finite numbers, booleans, null, arrays and plain
 * objects without a `__proto__` key, nested at most `depth` deep), so `JsonValue` would take it as it is.
 */
function isPlainJson(value: unknown, depth = 64): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (depth === 0) return false;
  if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth - 1));
  if (!isPlainObject(value) || Object.hasOwn(value, '__proto__')) return false;
  for (const key in value) if (!isPlainJson(value[key], depth - 1)) return false;
  return true;
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const isClientId = (v: unknown): v is string => typeof v === 'string' && idProblem(v) === null;
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/**
 * {@link prepareRecords} for one record of the usual form, without zod: the same prepared record the schemas give
 * (`ProductionRecord`, then `StartRolloutInput` / `AttemptUpdateInput`), or `undefined` when the record is anything
 * else (the schemas then decide, and word any refusal). Null for a `spans` record without spans (nothing to apply).
 */
function fastPrepareRecord(raw: unknown, serialize: SpanSerializer | undefined): PreparedRecord | null | undefined {
  if (!isPlainObject(raw)) return undefined;
  const r = raw;
  if (r.kind === 'spans') {
    if (!Array.isArray(r.spans)) return undefined;
    if (r.spans.length === 0) return null;
    if (!r.spans.every((s: unknown) => isPlainObject(s) && isId(s.rolloutId) && isId(s.attemptId))) return undefined;
    return { kind: 'spans', prepared: prepareSpans(r.spans, serialize) };
  }
  if (r.kind === 'end') {
    if (!isId(r.rolloutId) || !isId(r.attemptId) || !isTime(r.endTime)) return undefined;
    if (r.status !== 'succeeded' && r.status !== 'failed') return undefined;
    return {
      kind: 'end',
      rolloutId: r.rolloutId,
      attemptId: r.attemptId,
      update: { status: r.status, endTime: r.endTime },
    };
  }
  if (r.kind !== 'start' || !isClientId(r.rolloutId) || !isClientId(r.attemptId) || !isTime(r.startTime))
    return undefined;
  if (r.input === undefined || !isPlainJson(r.input)) return undefined;
  if (r.metadata !== undefined && !(isPlainObject(r.metadata) && isPlainJson(r.metadata))) return undefined;
  if (r.resourcesId !== undefined && r.resourcesId !== null && !isId(r.resourcesId)) return undefined;
  // What `StartRolloutInput` gives for the request `startRequestOf` makes of it: the checks above are its checks.
  const req = startRequestOf({
    kind: 'start',
    rolloutId: r.rolloutId,
    attemptId: r.attemptId,
    input: r.input as JsonValue,
    metadata: (r.metadata ?? {}) as JsonObject,
    resourcesId: r.resourcesId as string | null | undefined,
    startTime: r.startTime,
  });
  return { kind: 'start', req };
}

/**
 * Applies a recorder's prepared batch in one transaction, in batch order: a start creates the rollout and moves its
 * attempt to `running` (as `startRollout` + `updateAttempt` do), spans are added (duplicates skipped), an end sets the
 * final status and time. The same rules as the store methods run, so a retried batch changes nothing. Any refusal
 * throws and the whole transaction is undone; the caller then applies the records one by one.
 */
export function* applyRecordsRule(t: RuleContext, records: readonly PreparedRecord[]): Rule<number> {
  // Where a read is a round trip (PostgreSQL), every rollout of the batch and the latest attempts of those that exist
  // are read (and locked, in id order) at once; `coalesceWrites` answers the rules' reads from them.
  const ids = [...new Set(records.flatMap(rolloutIdsOf))].sort();
  const found = yield* call('getRollouts', ids);
  const existing = found === null ? [] : ids.filter((id) => found.has(id));
  if (existing.length > 0) yield* call('getLatestAttempts', existing);
  for (const record of records) {
    if (record.kind === 'start') {
      yield* startRunningRule(t, record.req);
    } else if (record.kind === 'spans') {
      yield* addSpansRule(t, record.prepared);
    } else {
      yield* updateAttemptRule(t, record.rolloutId, record.attemptId, record.update);
    }
  }
  return records.length;
}

function rolloutIdsOf(record: PreparedRecord): string[] {
  if (record.kind === 'start') return record.req.rolloutId === undefined ? [] : [record.req.rolloutId];
  if (record.kind === 'end') return [record.rolloutId];
  return record.prepared.spans.map((s) => s.rolloutId);
}

/**
 * `startRollout` then `updateAttempt(status: running)`, as one step: a new rollout is written once, already `running`
 * with its first attempt `running` (the state those two calls leave), instead of written `preparing` and rewritten. A
 * rollout that exists is the repeated start `startRollout` allows (same attempt), moved on to `running` if it was not.
 */
function* startRunningRule(t: RuleContext, req: z.infer<typeof StartRolloutInput>): Rule<void> {
  const existing = req.rolloutId === undefined ? null : yield* call('getRollout', req.rolloutId);
  if (existing) {
    const started = repeatedStart(existing, yield* call('getLatestAttempt', existing.rolloutId), req.attemptId);
    if (started.attempt.status === 'preparing')
      yield* updateAttemptRule(t, started.rolloutId, started.attempt.attemptId, RUNNING);
    return;
  }
  const rollout = newRolloutRecord(req, 'running', t.now, yield* call('getLatestResourcesId'));
  yield* call('insertRollouts', [rollout]);
  const attempt = newAttemptRecord(rollout.rolloutId, 1, req.workerId ?? null, req.startTime ?? t.now, req.attemptId);
  attempt.status = 'running';
  yield* call('insertAttempt', attempt);
  t.changed.push(rollout);
}

/**
 * A recorder's batch in one write transaction (`write`): the records are checked first ({@link prepareRecords}), then
 * applied in order ({@link applyRecordsRule}). When a record is refused (bad shape, unknown rollout, conflicting ids)
 * nothing of that transaction stays and the batch goes record by record through `applyRecords` instead, so the answer
 * (`applied`, `rejected` by index) is the one `applyRecords` gives. A store fault (not an `AglError`) is thrown.
 */
export async function applyRecordsBatch(
  store: LightningStore,
  records: readonly unknown[],
  serialize: SpanSerializer | undefined,
  write: (plan: Plan<number>) => Promise<number>,
): Promise<ApplyRecordsResult> {
  try {
    const prepared = prepareRecords(records, serialize);
    if (prepared !== null) {
      await write((t) => coalesceWrites(applyRecordsRule(t, prepared)));
      return { applied: records.length, rejected: [] };
    }
  } catch (error) {
    if (!AglError.isInstance(error)) throw error;
  }
  return applyRecords(store, records);
}
