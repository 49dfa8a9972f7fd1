import { NotFoundError } from '@agl/core/errors';
import {
  Span as SpanSchema,
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
  type ResourcesUpdate,
  type Rollout,
  type RolloutStatus,
  type Span,
  type Worker,
} from '@agl/core/schema';
import type { Clock, StoreStatistics } from '@agl/core/store';
import { fastParseSpan } from '@agl/core/schema';
import {
  AttemptUpdateInput,
  DequeueInput,
  EnqueueRolloutInput,
  IdSchema,
  RolloutUpdateInput,
  SequencePairsInput,
  StartRolloutInput,
  WorkerOption,
  WorkerUpdateInput,
  parseApi,
  parseNamedResources,
} from '../engine/input';
import {
  newAttemptRecord,
  newRolloutRecord,
  repeatedStart,
  statusChangeTime,
  newWorker,
  syncWorkerFromAttempt,
  syncWorkerOnEmptyDequeue,
  watchdogVerdict,
} from '../engine/rules';
import type { AsyncStorageTx, AsyncStoreDatabase } from './async-storage';
import { sequenceBlocks, spreadSequenceIds } from '../engine/sequence-blocks';

/** Options of {@link AsyncStoreEngine}. */
export interface AsyncStoreEngineOptions {
  db: AsyncStoreDatabase;
  clock: Clock;
  /** Watchdog debounce in seconds (default 10; 0 = scan on every watchdog method). */
  scanDebounceSeconds?: number;
  /** Called after a committed transaction with every rollout whose status changed in it. */
  onRolloutsChanged?: (rollouts: readonly Rollout[]) => void;
  /**
   * Takes a cluster-wide lock for the current transaction, so only one server scans at a time (PostgreSQL: an
   * advisory transaction lock). Returns false when another server holds it. Absent = always true.
   */
  tryScanLock?: (tx: AsyncStorageTx) => Promise<boolean>;
}

/** One transaction's state: the storage handle and the rollouts whose status changed. */
interface Tx {
  s: AsyncStorageTx;
  changed: Rollout[];
  enqueued: number;
}

const rolloutNotFound = (id: string): NotFoundError =>
  new NotFoundError(
    'rollout',
    id,
    `Rollout ${id} not found. Check the id, or create it with enqueueRollout/startRollout first.`,
  );

/**
 * The asynchronous twin of `StoreEngine`: AGL 0.3's store semantics over an {@link AsyncStoreDatabase}, translated
 * line by line (same rules, same validation, same order of reads and writes). Every public method is one
 * transaction; a failed call changes nothing. Reads of rows that a method rewrites take row locks in the backend, so
 * concurrent servers never lose an update, and the backend may re-run a transaction after a serialization failure.
 */
export class AsyncStoreEngine {
  readonly #db: AsyncStoreDatabase;
  readonly #clock: Clock;
  readonly #debounce: number;
  readonly #onChanged: ((rollouts: readonly Rollout[]) => void) | undefined;
  readonly #tryScanLock: ((tx: AsyncStorageTx) => Promise<boolean>) | undefined;
  #lastScan: number | null = null;
  #scanning: Promise<void> | null = null;
  /** How many watchdog scans ran. */
  scans = 0;

  constructor(options: AsyncStoreEngineOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#debounce = options.scanDebounceSeconds ?? 10;
    this.#onChanged = options.onRolloutsChanged;
    this.#tryScanLock = options.tryScanLock;
  }

  get db(): AsyncStoreDatabase {
    return this.#db;
  }

  async #tx<T>(fn: (t: Tx) => Promise<T>): Promise<T> {
    let changed: Rollout[] = [];
    const result = await this.#db.transaction(async (s) => {
      const t: Tx = { s, changed: [], enqueued: 0 };
      const value = await fn(t);
      if ((t.changed.length > 0 || t.enqueued > 0) && s.publishChanges) await s.publishChanges(t.changed, t.enqueued);
      changed = t.changed;
      return value;
    });
    if (changed.length > 0) this.#onChanged?.(changed);
    return result;
  }

  read<T>(fn: (s: AsyncStorageTx) => Promise<T>): Promise<T> {
    return this.#db.read(fn);
  }

  // ---------------------------------------------------------------- watchdog

  /** Runs the watchdog unless it ran less than `scanDebounceSeconds` ago (a scan in progress is awaited). */
  async maybeScan(): Promise<boolean> {
    if (this.#scanning) {
      await this.#scanning;
      return false;
    }
    const now = this.#clock.now();
    if (this.#debounce > 0 && this.#lastScan !== null && now - this.#lastScan < this.#debounce) return false;
    this.#lastScan = now;
    this.scans += 1;
    this.#scanning = this.#tx((t) => this.#scan(t, now)).finally(() => {
      this.#scanning = null;
    });
    await this.#scanning;
    return true;
  }

  async #scan(t: Tx, now: number): Promise<void> {
    if (this.#tryScanLock && !(await this.#tryScanLock(t.s))) return;
    const candidates = await t.s.listRollouts({ statuses: ['preparing', 'running'] });
    if (candidates.length === 0) return;
    const latest = await t.s.getLatestAttempts(candidates.map((r) => r.rolloutId));
    for (const candidate of candidates) {
      const seen = latest.get(candidate.rolloutId);
      if (!seen || watchdogVerdict(candidate, seen, now) === null) continue;
      // Re-read under the row lock: another server may have finished the attempt since the unlocked list.
      const rollout = await t.s.getRollout(candidate.rolloutId);
      const attempt = rollout ? await t.s.getLatestAttempt(candidate.rolloutId) : null;
      if (!rollout || !attempt) continue;
      const verdict = watchdogVerdict(rollout, attempt, now);
      if (verdict && canTransitionAttempt(attempt.status, verdict))
        await this.#setAttemptStatus(t, rollout, attempt, verdict, now, true);
    }
  }

  // ---------------------------------------------------------------- helpers

  async #requireRollout(t: Tx, rolloutId: string): Promise<Rollout> {
    const rollout = await t.s.getRollout(rolloutId);
    if (!rollout) throw rolloutNotFound(rolloutId);
    return rollout;
  }

  async #setRolloutStatus(t: Tx, rollout: Rollout, status: RolloutStatus, now: number): Promise<void> {
    if (rollout.status === status) return;
    rollout.status = status;
    if (isTerminalStatus(status)) rollout.endTime = now;
    if ((status === 'queuing' || status === 'requeuing') && !(await t.s.isQueued(rollout.rolloutId))) {
      await t.s.enqueue([rollout.rolloutId]);
      t.enqueued += 1;
    }
    t.changed.push(rollout);
  }

  async #setAttemptStatus(
    t: Tx,
    rollout: Rollout,
    attempt: Attempt,
    status: AttemptStatus,
    now: number,
    isLatest: boolean,
  ): Promise<void> {
    attempt.status = status;
    if (status === 'failed' || status === 'succeeded') attempt.endTime = now;
    await t.s.updateAttempt(attempt);
    if (isLatest) {
      const target = rolloutStatusFromAttempt(status, attempt.sequenceId, rollout.config);
      if (target !== rollout.status && canTransitionRollout(rollout.status, target)) {
        await this.#setRolloutStatus(t, rollout, target, now);
        await t.s.updateRollout(rollout);
      }
    }
    if (attempt.workerId) await this.#syncWorker(t, attempt, now, false);
  }

  async #syncWorker(t: Tx, attempt: Attempt, now: number, fromDequeue: boolean): Promise<void> {
    if (!attempt.workerId) return;
    const worker = (await t.s.getWorker(attempt.workerId)) ?? newWorker(attempt.workerId);
    await t.s.putWorker(syncWorkerFromAttempt(worker, attempt, now, fromDequeue));
  }

  async #newAttempt(
    t: Tx,
    rollout: Rollout,
    workerId: string | null,
    now: number,
    attemptId?: string,
  ): Promise<Attempt> {
    const previous = await t.s.getLatestAttempt(rollout.rolloutId);
    const attempt = newAttemptRecord(rollout.rolloutId, (previous?.sequenceId ?? 0) + 1, workerId, now, attemptId);
    await t.s.insertAttempt(attempt);
    return attempt;
  }

  // ---------------------------------------------------------------- rollouts

  async startRollout(request: unknown): Promise<AttemptedRollout> {
    const req = parseApi(StartRolloutInput, request, 'startRollout request');
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const existing = req.rolloutId === undefined ? null : await t.s.getRollout(req.rolloutId);
      if (existing) return repeatedStart(existing, await t.s.getLatestAttempt(existing.rolloutId), req.attemptId);
      const rollout = newRolloutRecord(req, 'preparing', now, await t.s.getLatestResourcesId());
      await t.s.insertRollouts([rollout]);
      const attempt = await this.#newAttempt(t, rollout, req.workerId ?? null, req.startTime ?? now, req.attemptId);
      await this.#syncWorker(t, attempt, now, false);
      return { ...rollout, attempt };
    });
  }

  async enqueueRollouts(requests: unknown): Promise<Rollout[]> {
    if (!Array.isArray(requests)) parseApi(EnqueueRolloutInput.array(), requests, 'enqueueRollouts requests');
    const reqs = (requests as unknown[]).map((r, i) =>
      parseApi(EnqueueRolloutInput, r, `enqueueRollouts request #${i}`),
    );
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const latest = await t.s.getLatestResourcesId();
      const rollouts = reqs.map((r) => newRolloutRecord(r, 'queuing', now, latest));
      await t.s.insertRollouts(rollouts);
      await t.s.enqueue(rollouts.map((r) => r.rolloutId));
      t.enqueued += rollouts.length;
      return rollouts;
    });
  }

  async dequeueRollouts(options: unknown): Promise<AttemptedRollout[]> {
    const o = parseApi(DequeueInput, options ?? {}, 'dequeueRollouts options');
    const workerId = o.workerId ?? null;
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const claimed: AttemptedRollout[] = [];
      while (claimed.length < o.limit) {
        const id = await t.s.dequeue();
        if (id === null) break;
        const rollout = await t.s.getRollout(id);
        if (!rollout || (rollout.status !== 'queuing' && rollout.status !== 'requeuing')) continue; // stale entry
        const attempt = await this.#newAttempt(t, rollout, workerId, now);
        await this.#setRolloutStatus(t, rollout, 'preparing', now);
        await t.s.updateRollout(rollout);
        claimed.push({ ...rollout, attempt });
      }
      if (workerId !== null) {
        const last = claimed.at(-1);
        if (last) await this.#syncWorker(t, last.attempt, now, true);
        else if (o.limit > 0)
          await t.s.putWorker(syncWorkerOnEmptyDequeue((await t.s.getWorker(workerId)) ?? newWorker(workerId), now));
      }
      return claimed;
    });
  }

  async startAttempt(rolloutId: unknown, options: unknown): Promise<AttemptedRollout> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    const o = parseApi(WorkerOption, options ?? {}, 'startAttempt options');
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const rollout = await this.#requireRollout(t, id);
      assertRolloutTransition(id, rollout.status, 'preparing');
      const attempt = await this.#newAttempt(t, rollout, o.workerId ?? null, now);
      await this.#setRolloutStatus(t, rollout, 'preparing', now);
      await t.s.updateRollout(rollout);
      await this.#syncWorker(t, attempt, now, false);
      return { ...rollout, attempt };
    });
  }

  async updateRollout(rolloutId: unknown, update: unknown): Promise<Rollout> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    const u = parseApi(RolloutUpdateInput, update ?? {}, 'updateRollout fields');
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const rollout = await this.#requireRollout(t, id);
      if (u.status !== undefined) assertRolloutTransition(id, rollout.status, u.status);
      if (u.input !== undefined) rollout.input = u.input;
      if (u.mode !== undefined) rollout.mode = u.mode;
      if (u.resourcesId !== undefined) rollout.resourcesId = u.resourcesId;
      if (u.config !== undefined) rollout.config = structuredClone(u.config);
      if (u.metadata !== undefined) rollout.metadata = u.metadata === null ? null : { ...u.metadata };
      if (u.status !== undefined) {
        if (u.status === rollout.status && isTerminalStatus(u.status)) rollout.endTime = now;
        await this.#setRolloutStatus(t, rollout, u.status, now);
        if ((u.status === 'queuing' || u.status === 'requeuing') && !(await t.s.isQueued(id))) {
          await t.s.enqueue([id]);
          t.enqueued += 1;
        }
      }
      await t.s.updateRollout(rollout);
      return rollout;
    });
  }

  async updateAttempt(rolloutId: unknown, attemptId: unknown, update: unknown): Promise<Attempt> {
    const rid = parseApi(IdSchema, rolloutId, 'rolloutId');
    const aid = parseApi(IdSchema, attemptId, 'attemptId');
    const u = parseApi(AttemptUpdateInput, update ?? {}, 'updateAttempt fields');
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const rollout = await this.#requireRollout(t, rid);
      const latest = await t.s.getLatestAttempt(rid);
      if (!latest) {
        throw new NotFoundError(
          'attempt',
          aid,
          `No attempts found for rollout ${rid}. Dequeue it or call startAttempt first.`,
        );
      }
      const attempt = aid === 'latest' || aid === latest.attemptId ? latest : await t.s.getAttempt(rid, aid);
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
        await this.#setAttemptStatus(t, rollout, attempt, u.status, statusChangeTime(u, now), isLatest);
      } else {
        await t.s.updateAttempt(attempt);
        if (u.workerId) await this.#syncWorker(t, attempt, now, false);
      }
      return attempt;
    });
  }

  // ---------------------------------------------------------------- spans

  /** Next values of the per-rollout counters, in input order (AGL quirk 4 kept: no existence check). */
  async nextSequenceIds(pairs: unknown): Promise<number[]> {
    const list = parseApi(SequencePairsInput, pairs, 'span sequence id requests');
    const counts = sequenceBlocks(list);
    return this.#tx(async (t) => {
      const lastIds = new Map<string, number>();
      for (const [rolloutId, count] of counts) lastIds.set(rolloutId, await t.s.incrementSequence(rolloutId, count));
      return spreadSequenceIds(list, counts, lastIds);
    });
  }

  /** Stores spans atomically (duplicates skipped, one multi-row insert), raises the counters, applies heartbeats. */
  async addSpans(spans: unknown): Promise<Span[]> {
    if (!Array.isArray(spans)) parseApi(SpanSchema.array(), spans, 'spans');
    const list = spans as unknown[];
    const parsed = list.map(
      (s, i) => fastParseSpan(s) ?? parseApi(SpanSchema, s, list.length === 1 ? 'span' : `span #${i}`),
    );
    if (parsed.length === 0) return [];
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const groups = new Map<string, { rolloutId: string; attemptId: string }>();
      const maxSeq = new Map<string, number>();
      for (const span of parsed) {
        groups.set(`${span.rolloutId}\u0000${span.attemptId}`, {
          rolloutId: span.rolloutId,
          attemptId: span.attemptId,
        });
        maxSeq.set(span.rolloutId, Math.max(maxSeq.get(span.rolloutId) ?? 0, span.sequenceId));
      }
      const context = new Map<string, { rollout: Rollout; attempt: Attempt }>();
      // Lock rollouts in a fixed order so two batches over the same rollouts cannot deadlock.
      for (const key of [...groups.keys()].sort()) {
        const { rolloutId, attemptId } = groups.get(key)!;
        const rollout = await t.s.getRollout(rolloutId);
        if (!rollout) throw rolloutNotFound(rolloutId);
        const attempt = await t.s.getAttempt(rolloutId, attemptId);
        if (!attempt) {
          throw new NotFoundError(
            'attempt',
            attemptId,
            `Attempt ${attemptId} not found for rollout ${rolloutId}. Spans must name an existing attempt.`,
          );
        }
        context.set(key, { rollout, attempt });
      }
      for (const rolloutId of [...maxSeq.keys()].sort()) await t.s.raiseSequence(rolloutId, maxSeq.get(rolloutId)!);
      const inserted = await t.s.insertSpans(parsed);
      const beat = new Set(inserted.map((s) => `${s.rolloutId}\u0000${s.attemptId}`));
      for (const key of [...beat].sort()) {
        const ctx = context.get(key);
        if (ctx) await this.#heartbeat(t, ctx.rollout, ctx.attempt, now);
      }
      return inserted;
    });
  }

  async #heartbeat(t: Tx, rolloutSnapshot: Rollout, attempt: Attempt, now: number): Promise<void> {
    attempt.lastHeartbeatTime = now;
    if (attempt.status === 'preparing' || attempt.status === 'unresponsive') attempt.status = 'running';
    await t.s.updateAttempt(attempt);
    if (attempt.status !== 'running') return;
    const latest = await t.s.getLatestAttempt(attempt.rolloutId);
    if (latest?.attemptId !== attempt.attemptId) return;
    const rollout = (await t.s.getRollout(rolloutSnapshot.rolloutId)) ?? rolloutSnapshot;
    if (rollout.status === 'preparing' || rollout.status === 'requeuing') {
      await this.#setRolloutStatus(t, rollout, 'running', now);
      await t.s.updateRollout(rollout);
    }
  }

  // ---------------------------------------------------------------- resources and workers

  async addResources(resources: unknown): Promise<ResourcesUpdate> {
    const parsed = parseNamedResources(resources);
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const record: ResourcesUpdate = {
        resourcesId: newResourcesId(),
        createTime: now,
        updateTime: now,
        version: 1,
        resources: parsed,
      };
      await t.s.putResources(record);
      return record;
    });
  }

  async updateResources(resourcesId: unknown, resources: unknown): Promise<ResourcesUpdate> {
    const id = parseApi(IdSchema, resourcesId, 'resourcesId');
    const parsed = parseNamedResources(resources);
    return this.#tx(async (t) => {
      const now = this.#clock.now();
      const existing = await t.s.getResources(id);
      const record: ResourcesUpdate = existing
        ? { ...existing, resources: parsed, updateTime: now, version: existing.version + 1 }
        : { resourcesId: id, createTime: now, updateTime: now, version: 1, resources: parsed };
      await t.s.putResources(record);
      return record;
    });
  }

  async updateWorker(workerId: unknown, update: unknown): Promise<Worker> {
    const id = parseApi(IdSchema, workerId, 'workerId');
    const u = parseApi(WorkerUpdateInput, update ?? {}, 'updateWorker fields');
    return this.#tx(async (t) => {
      const worker = (await t.s.getWorker(id)) ?? newWorker(id);
      worker.lastHeartbeatTime = this.#clock.now();
      if (u.heartbeatStats !== undefined) worker.heartbeatStats = { ...u.heartbeatStats };
      await t.s.putWorker(worker);
      return worker;
    });
  }

  async statistics(startedAt: number): Promise<StoreStatistics> {
    return this.read(async (s) => ({
      name: this.#db.name,
      totalRollouts: await s.countRollouts(),
      totalAttempts: await s.countAttempts(),
      totalSpans: await s.countSpans(),
      totalResources: await s.countResources(),
      totalWorkers: await s.countWorkers(),
      uptime: this.#clock.now() - startedAt,
    }));
  }
}
