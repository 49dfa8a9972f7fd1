import { NotFoundError } from '@agl/core/errors';
import {
  assertAttemptTransition,
  assertRolloutTransition,
  canTransitionAttempt,
  canTransitionRollout,
  isTerminalStatus,
  newResourcesId,
  rolloutStatusFromAttempt,
  type Attempt,
  type AttemptStatus,
  type AttemptedRollout,
  type NamedResources,
  type ResourcesUpdate,
  type Rollout,
  type RolloutStatus,
  type Span,
  type Worker,
} from '@agl/core/schema';
import type { z } from 'zod';
import type {
  AttemptUpdateInput,
  DequeueInput,
  EnqueueRolloutInput,
  RolloutUpdateInput,
  StartRolloutInput,
  WorkerUpdateInput,
} from './input';
import {
  attemptKey,
  newAttemptRecord,
  newRolloutRecord,
  newWorker,
  repeatedStart,
  statusChangeTime,
  syncWorkerFromAttempt,
  syncWorkerOnEmptyDequeue,
  watchdogVerdict,
} from './rules';
import { sequenceBlocks, spreadSequenceIds } from './sequence-blocks';
import type { SerializedSpans } from './storage';
import { call, type Rule } from './storage-ops';

/**
 * AGL 0.3's store semantics, written once as generator rules that yield storage calls (`storage-ops.ts`). The
 * synchronous backends (memory, SQLite) and PostgreSQL run the same rules, each inside one transaction per call, so
 * a failed call changes nothing. Rules read rows before rewriting them; on PostgreSQL those reads take row locks, so
 * rows are read in a fixed (sorted) order wherever one call touches several rollouts.
 */

/** One transaction's clock reading and what it changed, told to waiters once it commits. */
export interface RuleContext {
  readonly now: number;
  /** Rollouts whose status changed. */
  readonly changed: Rollout[];
  /** How many rollout ids were put on the queue. */
  enqueued: number;
}

/** A rule waiting for its transaction: the driver opens one, makes a {@link RuleContext} and runs it. */
export type Plan<T> = (context: RuleContext) => Rule<T>;

/** Spans checked (and serialised, where the storage stores text) before the write transaction. */
export interface PreparedSpans {
  readonly spans: readonly Span[];
  readonly serialized: SerializedSpans | null;
}

type Input<S extends z.ZodType> = z.infer<S>;

export const rolloutNotFound = (id: string): NotFoundError =>
  new NotFoundError(
    'rollout',
    id,
    `Rollout ${id} not found. Check the id, or create it with enqueueRollout/startRollout first.`,
  );

const isQueueStatus = (status: RolloutStatus): boolean => status === 'queuing' || status === 'requeuing';

// ---------------------------------------------------------------- helpers

function* enqueue(t: RuleContext, rolloutIds: readonly string[]): Rule<void> {
  yield* call('enqueue', rolloutIds);
  t.enqueued += rolloutIds.length;
}

/** Puts the id on the queue unless it is there already. */
function* enqueueOnce(t: RuleContext, rolloutId: string): Rule<void> {
  if (!(yield* call('isQueued', rolloutId))) yield* enqueue(t, [rolloutId]);
}

function* requireRollout(rolloutId: string): Rule<Rollout> {
  const rollout = yield* call('getRollout', rolloutId);
  if (!rollout) throw rolloutNotFound(rolloutId);
  return rollout;
}

function* setRolloutStatus(t: RuleContext, rollout: Rollout, status: RolloutStatus, now: number): Rule<void> {
  if (rollout.status === status) return;
  rollout.status = status;
  if (isTerminalStatus(status)) rollout.endTime = now;
  if (isQueueStatus(status)) yield* enqueueOnce(t, rollout.rolloutId);
  t.changed.push(rollout);
}

/** Writes an attempt status, propagates it to the rollout when the attempt is the latest, and syncs the worker. */
function* setAttemptStatus(
  t: RuleContext,
  rollout: Rollout,
  attempt: Attempt,
  status: AttemptStatus,
  now: number,
  isLatest: boolean,
): Rule<void> {
  attempt.status = status;
  if (status === 'failed' || status === 'succeeded') attempt.endTime = now;
  yield* call('updateAttempt', attempt);
  if (isLatest) {
    const target = rolloutStatusFromAttempt(status, attempt.sequenceId, rollout.config);
    // A move the transition table forbids (e.g. cancelled → succeeded, AGL quirk 3) leaves the rollout alone.
    if (target !== rollout.status && canTransitionRollout(rollout.status, target)) {
      yield* setRolloutStatus(t, rollout, target, now);
      yield* call('updateRollout', rollout);
    }
  }
  yield* syncWorker(attempt, now, false);
}

function* syncWorker(attempt: Attempt, now: number, fromDequeue: boolean): Rule<void> {
  if (!attempt.workerId) return;
  const worker = (yield* call('getWorker', attempt.workerId)) ?? newWorker(attempt.workerId);
  yield* call('putWorker', syncWorkerFromAttempt(worker, attempt, now, fromDequeue));
}

function* newAttempt(rollout: Rollout, workerId: string | null, now: number, attemptId?: string): Rule<Attempt> {
  const previous = yield* call('getLatestAttempt', rollout.rolloutId);
  const attempt = newAttemptRecord(rollout.rolloutId, (previous?.sequenceId ?? 0) + 1, workerId, now, attemptId);
  yield* call('insertAttempt', attempt);
  return attempt;
}

// ---------------------------------------------------------------- watchdog

/**
 * The watchdog: attempts past their timeouts become `timeout` / `unresponsive`. Candidates are listed without locks
 * and re-read (under the row lock on PostgreSQL) before any change, since another server may have finished them.
 */
export function* scanRule(t: RuleContext): Rule<void> {
  if ((yield* call('tryScanLock')) === false) return; // another server scans
  const candidates = yield* call('listRollouts', { statuses: ['preparing', 'running'] });
  if (candidates.length === 0) return;
  const latest = yield* call(
    'getLatestAttempts',
    candidates.map((r) => r.rolloutId),
  );
  for (const candidate of candidates) {
    const seen = latest.get(candidate.rolloutId);
    if (!seen || watchdogVerdict(candidate, seen, t.now) === null) continue;
    const rollout = yield* call('getRollout', candidate.rolloutId);
    const attempt = rollout ? yield* call('getLatestAttempt', candidate.rolloutId) : null;
    if (!rollout || !attempt) continue;
    const verdict = watchdogVerdict(rollout, attempt, t.now);
    if (verdict && canTransitionAttempt(attempt.status, verdict))
      yield* setAttemptStatus(t, rollout, attempt, verdict, t.now, true);
  }
}

// ---------------------------------------------------------------- rollouts

export function* startRolloutRule(t: RuleContext, req: Input<typeof StartRolloutInput>): Rule<AttemptedRollout> {
  const existing = req.rolloutId === undefined ? null : yield* call('getRollout', req.rolloutId);
  if (existing) return repeatedStart(existing, yield* call('getLatestAttempt', existing.rolloutId), req.attemptId);
  const rollout = newRolloutRecord(req, 'preparing', t.now, yield* call('getLatestResourcesId'));
  yield* call('insertRollouts', [rollout]);
  const attempt = yield* newAttempt(rollout, req.workerId ?? null, req.startTime ?? t.now, req.attemptId);
  yield* syncWorker(attempt, t.now, false);
  return { ...rollout, attempt };
}

export function* enqueueRolloutsRule(
  t: RuleContext,
  reqs: ReadonlyArray<Input<typeof EnqueueRolloutInput>>,
): Rule<Rollout[]> {
  const latest = yield* call('getLatestResourcesId');
  const rollouts = reqs.map((r) => newRolloutRecord(r, 'queuing', t.now, latest));
  yield* call('insertRollouts', rollouts);
  yield* enqueue(
    t,
    rollouts.map((r) => r.rolloutId),
  );
  return rollouts;
}

export function* dequeueRolloutsRule(t: RuleContext, o: Input<typeof DequeueInput>): Rule<AttemptedRollout[]> {
  const workerId = o.workerId ?? null;
  const claimed: AttemptedRollout[] = [];
  while (claimed.length < o.limit) {
    const id = yield* call('dequeue');
    if (id === null) break;
    const rollout = yield* call('getRollout', id);
    if (!rollout || !isQueueStatus(rollout.status)) continue; // stale entry
    const attempt = yield* newAttempt(rollout, workerId, t.now);
    yield* setRolloutStatus(t, rollout, 'preparing', t.now);
    yield* call('updateRollout', rollout);
    claimed.push({ ...rollout, attempt });
  }
  if (workerId !== null) {
    const last = claimed.at(-1);
    if (last) yield* syncWorker(last.attempt, t.now, true);
    else if (o.limit > 0) {
      const worker = (yield* call('getWorker', workerId)) ?? newWorker(workerId);
      yield* call('putWorker', syncWorkerOnEmptyDequeue(worker, t.now));
    }
  }
  return claimed;
}

export function* startAttemptRule(t: RuleContext, id: string, workerId: string | null): Rule<AttemptedRollout> {
  const rollout = yield* requireRollout(id);
  assertRolloutTransition(id, rollout.status, 'preparing');
  const attempt = yield* newAttempt(rollout, workerId, t.now);
  yield* setRolloutStatus(t, rollout, 'preparing', t.now);
  yield* call('updateRollout', rollout);
  yield* syncWorker(attempt, t.now, false);
  return { ...rollout, attempt };
}

export function* updateRolloutRule(t: RuleContext, id: string, u: Input<typeof RolloutUpdateInput>): Rule<Rollout> {
  const rollout = yield* requireRollout(id);
  if (u.status !== undefined) assertRolloutTransition(id, rollout.status, u.status);
  if (u.input !== undefined) rollout.input = u.input;
  if (u.mode !== undefined) rollout.mode = u.mode;
  if (u.resourcesId !== undefined) rollout.resourcesId = u.resourcesId;
  if (u.config !== undefined) rollout.config = structuredClone(u.config);
  if (u.metadata !== undefined) rollout.metadata = u.metadata === null ? null : { ...u.metadata };
  if (u.status !== undefined) {
    if (u.status === rollout.status && isTerminalStatus(u.status)) rollout.endTime = t.now;
    yield* setRolloutStatus(t, rollout, u.status, t.now);
    // Re-entering a queue status always leaves the id queued (once), even when the status did not change.
    if (isQueueStatus(u.status)) yield* enqueueOnce(t, id);
  }
  yield* call('updateRollout', rollout);
  return rollout;
}

export function* updateAttemptRule(
  t: RuleContext,
  rid: string,
  aid: string,
  u: Input<typeof AttemptUpdateInput>,
): Rule<Attempt> {
  const rollout = yield* requireRollout(rid);
  const latest = yield* call('getLatestAttempt', rid);
  if (!latest) {
    throw new NotFoundError(
      'attempt',
      aid,
      `No attempts found for rollout ${rid}. Dequeue it or call startAttempt first.`,
    );
  }
  const attempt = aid === 'latest' || aid === latest.attemptId ? latest : yield* call('getAttempt', rid, aid);
  if (!attempt) {
    throw new NotFoundError(
      'attempt',
      aid,
      `Attempt ${aid} not found for rollout ${rid}. Use an attempt id from queryAttempts, or "latest".`,
    );
  }
  if (u.status !== undefined) assertAttemptTransition(attempt.attemptId, attempt.status, u.status);
  if (u.workerId !== undefined) attempt.workerId = u.workerId;
  if (u.lastHeartbeatTime !== undefined) attempt.lastHeartbeatTime = u.lastHeartbeatTime;
  if (u.metadata !== undefined) attempt.metadata = u.metadata === null ? null : { ...u.metadata };
  const isLatest = attempt.attemptId === latest.attemptId;
  if (u.status !== undefined) {
    yield* setAttemptStatus(t, rollout, attempt, u.status, statusChangeTime(u, t.now), isLatest);
  } else {
    yield* call('updateAttempt', attempt);
    if (u.workerId) yield* syncWorker(attempt, t.now, false);
  }
  return attempt;
}

// ---------------------------------------------------------------- spans

/** Next values of the per-rollout counters, in input order (AGL quirk 4 kept: no existence check). */
export function* nextSequenceIdsRule(pairs: ReadonlyArray<readonly [string, string]>): Rule<number[]> {
  const counts = sequenceBlocks(pairs);
  const lastIds = new Map<string, number>();
  for (const rolloutId of [...counts.keys()].sort())
    lastIds.set(rolloutId, yield* call('incrementSequence', rolloutId, counts.get(rolloutId)!));
  return spreadSequenceIds(pairs, counts, lastIds);
}

/**
 * Stores checked spans atomically (duplicates skipped), raises the counters and applies the heartbeats; returns the
 * spans inserted. Rollouts are read (locked) in sorted order so two batches over the same rollouts cannot deadlock.
 */
export function* addSpansRule(t: RuleContext, prepared: PreparedSpans): Rule<Span[]> {
  if (prepared.spans.length === 0) return [];
  const groups = new Map<string, { rolloutId: string; attemptId: string }>();
  const maxSeq = new Map<string, number>();
  for (const span of prepared.spans) {
    groups.set(attemptKey(span), { rolloutId: span.rolloutId, attemptId: span.attemptId });
    maxSeq.set(span.rolloutId, Math.max(maxSeq.get(span.rolloutId) ?? 0, span.sequenceId));
  }
  const context = new Map<string, { rollout: Rollout; attempt: Attempt }>();
  for (const key of [...groups.keys()].sort()) {
    const { rolloutId, attemptId } = groups.get(key)!;
    const rollout = yield* requireRollout(rolloutId);
    const attempt = yield* call('getAttempt', rolloutId, attemptId);
    if (!attempt) {
      throw new NotFoundError(
        'attempt',
        attemptId,
        `Attempt ${attemptId} not found for rollout ${rolloutId}. Spans must name an existing attempt.`,
      );
    }
    context.set(key, { rollout, attempt });
  }
  for (const rolloutId of [...maxSeq.keys()].sort()) yield* call('raiseSequence', rolloutId, maxSeq.get(rolloutId)!);
  const inserted = prepared.serialized
    ? (yield* call('insertSerializedSpans', prepared.serialized))!
    : yield* call('insertSpans', prepared.spans);
  const beat = new Set(inserted.map(attemptKey));
  for (const key of [...beat].sort()) {
    const ctx = context.get(key);
    if (ctx) yield* heartbeat(t, ctx.rollout, ctx.attempt);
  }
  return inserted;
}

/**
 * A span is a heartbeat (AGL 0.3 §2.4; quirk 2 fixed: a rollout only follows an attempt that is now running). The
 * rollout snapshot was read (and locked) in this transaction, and nothing in it puts a rollout into
 * `preparing`/`requeuing`, so a snapshot in any other status (the usual case) cannot need the update below, and its
 * two reads are skipped.
 */
function* heartbeat(t: RuleContext, snapshot: Rollout, attempt: Attempt): Rule<void> {
  attempt.lastHeartbeatTime = t.now;
  if (attempt.status === 'preparing' || attempt.status === 'unresponsive') attempt.status = 'running';
  yield* call('updateAttempt', attempt);
  if (attempt.status !== 'running' || (snapshot.status !== 'preparing' && snapshot.status !== 'requeuing')) return;
  const latest = yield* call('getLatestAttempt', attempt.rolloutId);
  if (latest?.attemptId !== attempt.attemptId) return;
  const rollout = (yield* call('getRollout', snapshot.rolloutId)) ?? snapshot;
  if (rollout.status === 'preparing' || rollout.status === 'requeuing') {
    yield* setRolloutStatus(t, rollout, 'running', t.now);
    yield* call('updateRollout', rollout);
  }
}

// ---------------------------------------------------------------- resources and workers

export function* addResourcesRule(t: RuleContext, resources: NamedResources): Rule<ResourcesUpdate> {
  const record: ResourcesUpdate = {
    resourcesId: newResourcesId(),
    createTime: t.now,
    updateTime: t.now,
    version: 1,
    resources,
  };
  yield* call('putResources', record);
  return record;
}

export function* updateResourcesRule(t: RuleContext, id: string, resources: NamedResources): Rule<ResourcesUpdate> {
  const existing = yield* call('getResources', id);
  const record: ResourcesUpdate = existing
    ? { ...existing, resources, updateTime: t.now, version: existing.version + 1 }
    : { resourcesId: id, createTime: t.now, updateTime: t.now, version: 1, resources };
  yield* call('putResources', record);
  return record;
}

export function* updateWorkerRule(t: RuleContext, id: string, u: Input<typeof WorkerUpdateInput>): Rule<Worker> {
  const worker = (yield* call('getWorker', id)) ?? newWorker(id);
  worker.lastHeartbeatTime = t.now;
  if (u.heartbeatStats !== undefined) worker.heartbeatStats = { ...u.heartbeatStats };
  yield* call('putWorker', worker);
  return worker;
}
