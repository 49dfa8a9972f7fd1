import { AglError } from '@agl/core/errors';
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

/**
 * Applies a recorder's prepared batch in one transaction, in batch order: a start creates the rollout and moves its
 * attempt to `running` (as `startRollout` + `updateAttempt` do), spans are added (duplicates skipped), an end sets the
 * final status and time. The same rules as the store methods run, so a retried batch changes nothing. Any refusal
 * throws and the whole transaction is undone; the caller then applies the records one by one.
 */
export function* applyRecordsRule(t: RuleContext, records: readonly PreparedRecord[]): Rule<number> {
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
      await write((t) => applyRecordsRule(t, prepared));
      return { applied: records.length, rejected: [] };
    }
  } catch (error) {
    if (!AglError.isInstance(error)) throw error;
  }
  return applyRecords(store, records);
}
