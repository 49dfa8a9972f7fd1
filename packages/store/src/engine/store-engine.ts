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
} from './input';
import { fastParseSpan } from '@agl/core/schema';
import {
  newAttemptRecord,
  newRolloutRecord,
  repeatedStart,
  statusChangeTime,
  newWorker,
  syncWorkerFromAttempt,
  syncWorkerOnEmptyDequeue,
  watchdogVerdict,
} from './rules';
import { type SerializedSpans, type StoreStorage, WRITE_LOCK_BUSY } from './storage';
import { sequenceBlocks, spreadSequenceIds } from './sequence-blocks';

/** Spans checked (and serialised, where the storage stores text) by {@link StoreEngine.prepareSpans}. */
export interface PreparedSpans {
  readonly spans: readonly Span[];
  readonly serialized: SerializedSpans | null;
}

/** The outcome of one job of {@link StoreEngine.runBatch}. */
export type BatchResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Options of the shared business layer. */
export interface StoreEngineOptions {
  storage: StoreStorage;
  clock: Clock;
  /** Watchdog debounce in seconds (default 10; 0 = scan on every watchdog method). */
  scanDebounceSeconds?: number;
  /** Called after a committed transaction with every rollout whose status changed in it. */
  onRolloutsChanged?: (rollouts: readonly Rollout[]) => void;
  /** Called after a committed transaction that put rollout ids on the queue. */
  onQueued?: () => void;
}

const rolloutNotFound = (id: string): NotFoundError =>
  new NotFoundError(
    'rollout',
    id,
    `Rollout ${id} not found. Check the id, or create it with enqueueRollout/startRollout first.`,
  );

/**
 * AGL 0.3's store semantics, written once over a synchronous {@link StoreStorage}: every public method is one atomic
 * transaction (validation first, then reads and writes), so a failed call changes nothing. The async `LightningStore`
 * facade ({@link EngineStore}) wraps it.
 */
export class StoreEngine {
  readonly #s: StoreStorage;
  readonly #clock: Clock;
  readonly #debounce: number;
  readonly #onChanged: ((rollouts: readonly Rollout[]) => void) | undefined;
  #lastScan: number | null = null;
  #scanning = false;
  #changed: Rollout[] = [];
  #enqueued = false;
  /** True while {@link runBatch} runs its jobs. */
  #batching = false;
  readonly #onQueued: (() => void) | undefined;
  /** How many watchdog scans ran (for the debounce tests). */
  scans = 0;

  constructor(options: StoreEngineOptions) {
    this.#s = options.storage;
    this.#clock = options.clock;
    this.#debounce = options.scanDebounceSeconds ?? 10;
    this.#onChanged = options.onRolloutsChanged;
    this.#onQueued = options.onQueued;
  }

  get storage(): StoreStorage {
    return this.#s;
  }

  #tx<T>(fn: () => T): T {
    // Inside runBatch: the job's savepoint is its transaction; notifications wait for the batch's commit.
    if (this.#batching) return this.#s.savepoint!(fn);
    return this.#commit(() => this.#s.transaction(fn));
  }

  /** Runs `transaction` (which runs the caller's writes), then tells waiters what it changed, unless nothing ran. */
  #commit<T>(transaction: () => T): T {
    this.#changed = [];
    this.#enqueued = false;
    let result: T;
    try {
      result = transaction();
    } catch (error) {
      this.#changed = [];
      this.#enqueued = false;
      throw error;
    }
    if (result !== WRITE_LOCK_BUSY) this.#notify();
    return result;
  }

  #notify(): void {
    const changed = this.#changed;
    const enqueued = this.#enqueued;
    this.#changed = [];
    this.#enqueued = false;
    if (changed.length > 0) this.#onChanged?.(changed);
    if (enqueued) this.#onQueued?.();
  }

  /** Whether {@link runBatch} can isolate jobs (the storage has savepoints). */
  get batches(): boolean {
    return this.#s.savepoint !== undefined;
  }

  /**
   * Runs several write calls in one storage transaction (one commit instead of one each), each under its own
   * savepoint, so a call that throws undoes only its own changes and the others still land. Results come back in job
   * order once the transaction has committed; if the commit itself fails, every job gets that error. Waiters are told
   * after the commit. With `tryLock` (and a storage that has `tryTransaction`), returns `null` without running any job
   * when another connection holds the write lock.
   */
  runBatch(jobs: ReadonlyArray<() => unknown>, options: { tryLock?: boolean } = {}): BatchResult[] | null {
    if (!this.#s.savepoint) throw new Error('runBatch needs a storage with savepoints');
    this.#changed = [];
    this.#enqueued = false;
    const transaction =
      options.tryLock && this.#s.tryTransaction
        ? this.#s.tryTransaction.bind(this.#s)
        : this.#s.transaction.bind(this.#s);
    let results: BatchResult[] | typeof WRITE_LOCK_BUSY;
    try {
      results = transaction(() => {
        this.#batching = true;
        try {
          return jobs.map((job): BatchResult => {
            const changed = this.#changed.length;
            const enqueued = this.#enqueued;
            try {
              return { ok: true, value: this.#s.savepoint!(job) };
            } catch (error) {
              this.#changed.length = changed;
              this.#enqueued = enqueued;
              return { ok: false, error };
            }
          });
        } finally {
          this.#batching = false;
        }
      });
    } catch (error) {
      this.#changed = [];
      this.#enqueued = false;
      return jobs.map(() => ({ ok: false, error }));
    }
    if (results === WRITE_LOCK_BUSY) return null;
    this.#notify();
    return results;
  }

  #enqueue(rolloutIds: readonly string[]): void {
    this.#s.enqueue(rolloutIds);
    if (rolloutIds.length > 0) this.#enqueued = true;
  }

  read<T>(fn: (storage: StoreStorage) => T): T {
    return this.#s.read(() => fn(this.#s));
  }

  // ---------------------------------------------------------------- watchdog

  /**
   * Runs the watchdog unless it ran less than `scanDebounceSeconds` ago. Returns whether it scanned. While another
   * connection holds the write lock the scan is left to a later call (it is a health check, and that connection's
   * own store scans too) rather than blocking the caller.
   */
  maybeScan(): boolean {
    if (this.#scanning) return false;
    const now = this.#clock.now();
    const last = this.#lastScan;
    if (this.#debounce > 0 && last !== null && now - last < this.#debounce) return false;
    this.#lastScan = now;
    this.#scanning = true;
    try {
      const scan = (): void => this.#scan(now);
      const tryTransaction = this.#s.tryTransaction?.bind(this.#s);
      if (this.#batching || !tryTransaction) this.#tx(scan);
      else if (this.#commit(() => tryTransaction(scan)) === WRITE_LOCK_BUSY) {
        this.#lastScan = last;
        return false;
      }
      this.scans += 1;
    } finally {
      this.#scanning = false;
    }
    return true;
  }

  #scan(now: number): void {
    const candidates = this.#s.listRollouts({ statuses: ['preparing', 'running'] });
    if (candidates.length === 0) return;
    const latest = this.#s.getLatestAttempts(candidates.map((r) => r.rolloutId));
    for (const rollout of candidates) {
      const attempt = latest.get(rollout.rolloutId);
      if (!attempt) continue;
      const verdict = watchdogVerdict(rollout, attempt, now);
      if (verdict && canTransitionAttempt(attempt.status, verdict))
        this.#setAttemptStatus(rollout, attempt, verdict, now, true);
    }
  }

  // ---------------------------------------------------------------- helpers

  #requireRollout(rolloutId: string): Rollout {
    const rollout = this.#s.getRollout(rolloutId);
    if (!rollout) throw rolloutNotFound(rolloutId);
    return rollout;
  }

  #setRolloutStatus(rollout: Rollout, status: RolloutStatus, now: number): void {
    if (rollout.status === status) return;
    rollout.status = status;
    if (isTerminalStatus(status)) rollout.endTime = now;
    if ((status === 'queuing' || status === 'requeuing') && !this.#s.isQueued(rollout.rolloutId)) {
      this.#enqueue([rollout.rolloutId]);
    }
    this.#changed.push(rollout);
  }

  /** Writes an attempt status, propagates it to the rollout when the attempt is the latest, and syncs the worker. */
  #setAttemptStatus(rollout: Rollout, attempt: Attempt, status: AttemptStatus, now: number, isLatest: boolean): void {
    attempt.status = status;
    if (status === 'failed' || status === 'succeeded') attempt.endTime = now;
    this.#s.updateAttempt(attempt);
    if (isLatest) {
      const target = rolloutStatusFromAttempt(status, attempt.sequenceId, rollout.config);
      // A move the transition table forbids (e.g. cancelled → succeeded, AGL quirk 3) leaves the rollout alone.
      if (target !== rollout.status && canTransitionRollout(rollout.status, target)) {
        this.#setRolloutStatus(rollout, target, now);
        this.#s.updateRollout(rollout);
      }
    }
    if (attempt.workerId) this.#syncWorker(attempt, now, false);
  }

  #syncWorker(attempt: Attempt, now: number, fromDequeue: boolean): void {
    if (!attempt.workerId) return;
    const worker = this.#s.getWorker(attempt.workerId) ?? newWorker(attempt.workerId);
    this.#s.putWorker(syncWorkerFromAttempt(worker, attempt, now, fromDequeue));
  }

  #newAttempt(rollout: Rollout, workerId: string | null, now: number, attemptId?: string): Attempt {
    const previous = this.#s.getLatestAttempt(rollout.rolloutId);
    const attempt = newAttemptRecord(rollout.rolloutId, (previous?.sequenceId ?? 0) + 1, workerId, now, attemptId);
    this.#s.insertAttempt(attempt);
    return attempt;
  }

  // ---------------------------------------------------------------- rollouts

  startRollout(request: unknown): AttemptedRollout {
    const req = parseApi(StartRolloutInput, request, 'startRollout request');
    return this.#tx(() => {
      const now = this.#clock.now();
      const existing = req.rolloutId === undefined ? null : this.#s.getRollout(req.rolloutId);
      if (existing) return repeatedStart(existing, this.#s.getLatestAttempt(existing.rolloutId), req.attemptId);
      const rollout = newRolloutRecord(req, 'preparing', now, this.#s.getLatestResourcesId());
      this.#s.insertRollouts([rollout]);
      const attempt = this.#newAttempt(rollout, req.workerId ?? null, req.startTime ?? now, req.attemptId);
      this.#syncWorker(attempt, now, false);
      return { ...rollout, attempt };
    });
  }

  enqueueRollouts(requests: unknown): Rollout[] {
    if (!Array.isArray(requests)) parseApi(EnqueueRolloutInput.array(), requests, 'enqueueRollouts requests');
    const reqs = (requests as unknown[]).map((r, i) =>
      parseApi(EnqueueRolloutInput, r, `enqueueRollouts request #${i}`),
    );
    return this.#tx(() => {
      const now = this.#clock.now();
      const latest = this.#s.getLatestResourcesId();
      const rollouts = reqs.map((r) => newRolloutRecord(r, 'queuing', now, latest));
      this.#s.insertRollouts(rollouts);
      this.#enqueue(rollouts.map((r) => r.rolloutId));
      return rollouts;
    });
  }

  dequeueRollouts(options: unknown): AttemptedRollout[] {
    const o = parseApi(DequeueInput, options ?? {}, 'dequeueRollouts options');
    const workerId = o.workerId ?? null;
    return this.#tx(() => {
      const now = this.#clock.now();
      const claimed: AttemptedRollout[] = [];
      while (claimed.length < o.limit) {
        const id = this.#s.dequeue();
        if (id === null) break;
        const rollout = this.#s.getRollout(id);
        if (!rollout || (rollout.status !== 'queuing' && rollout.status !== 'requeuing')) continue; // stale entry
        const attempt = this.#newAttempt(rollout, workerId, now);
        this.#setRolloutStatus(rollout, 'preparing', now);
        this.#s.updateRollout(rollout);
        claimed.push({ ...rollout, attempt });
      }
      if (workerId !== null) {
        const last = claimed.at(-1);
        if (last) this.#syncWorker(last.attempt, now, true);
        else if (o.limit > 0)
          this.#s.putWorker(syncWorkerOnEmptyDequeue(this.#s.getWorker(workerId) ?? newWorker(workerId), now));
      }
      return claimed;
    });
  }

  startAttempt(rolloutId: unknown, options: unknown): AttemptedRollout {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    const o = parseApi(WorkerOption, options ?? {}, 'startAttempt options');
    return this.#tx(() => {
      const now = this.#clock.now();
      const rollout = this.#requireRollout(id);
      assertRolloutTransition(id, rollout.status, 'preparing');
      const attempt = this.#newAttempt(rollout, o.workerId ?? null, now);
      this.#setRolloutStatus(rollout, 'preparing', now);
      this.#s.updateRollout(rollout);
      this.#syncWorker(attempt, now, false);
      return { ...rollout, attempt };
    });
  }

  updateRollout(rolloutId: unknown, update: unknown): Rollout {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    const u = parseApi(RolloutUpdateInput, update ?? {}, 'updateRollout fields');
    return this.#tx(() => {
      const now = this.#clock.now();
      const rollout = this.#requireRollout(id);
      if (u.status !== undefined) assertRolloutTransition(id, rollout.status, u.status);
      if (u.input !== undefined) rollout.input = u.input;
      if (u.mode !== undefined) rollout.mode = u.mode;
      if (u.resourcesId !== undefined) rollout.resourcesId = u.resourcesId;
      if (u.config !== undefined) rollout.config = structuredClone(u.config);
      if (u.metadata !== undefined) rollout.metadata = u.metadata === null ? null : { ...u.metadata };
      if (u.status !== undefined) {
        if (u.status === rollout.status && isTerminalStatus(u.status)) rollout.endTime = now;
        this.#setRolloutStatus(rollout, u.status, now);
        // Re-entering a queue status always leaves the id queued (once), even when the status did not change.
        if ((u.status === 'queuing' || u.status === 'requeuing') && !this.#s.isQueued(id)) this.#enqueue([id]);
      }
      this.#s.updateRollout(rollout);
      return rollout;
    });
  }

  updateAttempt(rolloutId: unknown, attemptId: unknown, update: unknown): Attempt {
    const rid = parseApi(IdSchema, rolloutId, 'rolloutId');
    const aid = parseApi(IdSchema, attemptId, 'attemptId');
    const u = parseApi(AttemptUpdateInput, update ?? {}, 'updateAttempt fields');
    return this.#tx(() => {
      const now = this.#clock.now();
      const rollout = this.#requireRollout(rid);
      const latest = this.#s.getLatestAttempt(rid);
      if (!latest) {
        throw new NotFoundError(
          'attempt',
          aid,
          `No attempts found for rollout ${rid}. Dequeue it or call startAttempt first.`,
        );
      }
      const attempt = aid === 'latest' || aid === latest.attemptId ? latest : this.#s.getAttempt(rid, aid);
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
        this.#setAttemptStatus(rollout, attempt, u.status, statusChangeTime(u, now), isLatest);
      } else {
        this.#s.updateAttempt(attempt);
        if (u.workerId) this.#syncWorker(attempt, now, false);
      }
      return attempt;
    });
  }

  // ---------------------------------------------------------------- spans

  /** Next values of the per-rollout counters, in input order (AGL quirk 4 kept: no existence check). */
  nextSequenceIds(pairs: unknown): number[] {
    const list = parseApi(SequencePairsInput, pairs, 'span sequence id requests');
    const counts = sequenceBlocks(list);
    return this.#tx(() => {
      const lastIds = new Map<string, number>();
      for (const [rolloutId, count] of counts) lastIds.set(rolloutId, this.#s.incrementSequence(rolloutId, count));
      return spreadSequenceIds(list, counts, lastIds);
    });
  }

  /**
   * Checks spans for {@link StoreEngine.addPreparedSpans} and, on storages that store text, serialises them. Touches no
   * storage, so callers can run it before the write transaction (the write lock is then held only for the inserts).
   * With `attributesJson` (storages with `serializeSpans` only), `attributesJson[i]` is span i's attribute map as
   * checked JSON text, stored as it is; the span's own `attributes` are then ignored.
   */
  prepareSpans(spans: unknown, attributesJson?: ReadonlyArray<string | null>): PreparedSpans {
    if (!Array.isArray(spans)) parseApi(SpanSchema.array(), spans, 'spans');
    const list = spans as unknown[];
    // The attribute maps are checked, not copied (a tenth of an insert): a storage either serialises them or, keeping
    // objects, stores its own deep copy (`insertSpans`). The spans given back share them with the caller's input.
    const parsed = list.map(
      (s, i) =>
        fastParseSpan(s, { shareAttributes: true }) ??
        parseApi(SpanSchema, s, list.length === 1 ? 'span' : `span #${i}`),
    );
    if (attributesJson && !this.#s.serializeSpans)
      throw new Error(`${this.#s.name} keeps no attribute maps as JSON text; pass the maps as objects`);
    return {
      spans: parsed,
      serialized: parsed.length > 0 && this.#s.serializeSpans ? this.#s.serializeSpans(parsed, attributesJson) : null,
    };
  }

  /** {@link StoreEngine.prepareSpans}, then {@link StoreEngine.addPreparedSpans}. */
  addSpans(spans: unknown, attributesJson?: ReadonlyArray<string | null>): Span[] {
    return this.addPreparedSpans(this.prepareSpans(spans, attributesJson));
  }

  /** Stores checked spans atomically (duplicates skipped), raises the counters and applies the heartbeats; returns the spans inserted. */
  addPreparedSpans(prepared: PreparedSpans): Span[] {
    const parsed = prepared.spans;
    if (parsed.length === 0) return [];
    return this.#tx(() => {
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
      for (const [key, { rolloutId, attemptId }] of groups) {
        const rollout = this.#s.getRollout(rolloutId);
        if (!rollout) throw rolloutNotFound(rolloutId);
        const attempt = this.#s.getAttempt(rolloutId, attemptId);
        if (!attempt) {
          throw new NotFoundError(
            'attempt',
            attemptId,
            `Attempt ${attemptId} not found for rollout ${rolloutId}. Spans must name an existing attempt.`,
          );
        }
        context.set(key, { rollout, attempt });
      }
      for (const [rolloutId, seq] of maxSeq) this.#s.raiseSequence(rolloutId, seq);
      const inserted = prepared.serialized
        ? this.#s.insertSerializedSpans!(prepared.serialized)
        : this.#s.insertSpans(parsed);
      const beat = new Set(inserted.map((s) => `${s.rolloutId}\u0000${s.attemptId}`));
      for (const key of beat) {
        const ctx = context.get(key);
        if (ctx) this.#heartbeat(ctx.rollout, ctx.attempt, now);
      }
      return inserted;
    });
  }

  /**
   * A span is a heartbeat (AGL 0.3 §2.4; quirk 2 fixed: a rollout only follows an attempt that is now running). The
   * rollout snapshot was read in this transaction and nothing in it puts a rollout into `preparing`/`requeuing`, so a
   * snapshot in any other status (the usual case) cannot need the update below, and its two reads are skipped.
   */
  #heartbeat(rolloutSnapshot: Rollout, attempt: Attempt, now: number): void {
    attempt.lastHeartbeatTime = now;
    if (attempt.status === 'preparing' || attempt.status === 'unresponsive') attempt.status = 'running';
    this.#s.updateAttempt(attempt);
    if (
      attempt.status !== 'running' ||
      (rolloutSnapshot.status !== 'preparing' && rolloutSnapshot.status !== 'requeuing')
    )
      return;
    const latest = this.#s.getLatestAttempt(attempt.rolloutId);
    if (latest?.attemptId !== attempt.attemptId) return;
    const rollout = this.#s.getRollout(rolloutSnapshot.rolloutId) ?? rolloutSnapshot;
    if (rollout.status === 'preparing' || rollout.status === 'requeuing') {
      this.#setRolloutStatus(rollout, 'running', now);
      this.#s.updateRollout(rollout);
    }
  }

  // ---------------------------------------------------------------- resources and workers

  addResources(resources: unknown): ResourcesUpdate {
    const parsed = parseNamedResources(resources);
    return this.#tx(() => {
      const now = this.#clock.now();
      const record: ResourcesUpdate = {
        resourcesId: newResourcesId(),
        createTime: now,
        updateTime: now,
        version: 1,
        resources: parsed,
      };
      this.#s.putResources(record);
      return record;
    });
  }

  updateResources(resourcesId: unknown, resources: unknown): ResourcesUpdate {
    const id = parseApi(IdSchema, resourcesId, 'resourcesId');
    const parsed = parseNamedResources(resources);
    return this.#tx(() => {
      const now = this.#clock.now();
      const existing = this.#s.getResources(id);
      const record: ResourcesUpdate = existing
        ? { ...existing, resources: parsed, updateTime: now, version: existing.version + 1 }
        : { resourcesId: id, createTime: now, updateTime: now, version: 1, resources: parsed };
      this.#s.putResources(record);
      return record;
    });
  }

  updateWorker(workerId: unknown, update: unknown): Worker {
    const id = parseApi(IdSchema, workerId, 'workerId');
    const u = parseApi(WorkerUpdateInput, update ?? {}, 'updateWorker fields');
    return this.#tx(() => {
      const worker = this.#s.getWorker(id) ?? newWorker(id);
      worker.lastHeartbeatTime = this.#clock.now();
      if (u.heartbeatStats !== undefined) worker.heartbeatStats = { ...u.heartbeatStats };
      this.#s.putWorker(worker);
      return worker;
    });
  }

  statistics(startedAt: number): StoreStatistics {
    return this.read((s) => ({
      name: s.name,
      totalRollouts: s.countRollouts(),
      totalAttempts: s.countAttempts(),
      totalSpans: s.countSpans(),
      totalResources: s.countResources(),
      totalWorkers: s.countWorkers(),
      uptime: this.#clock.now() - startedAt,
    }));
  }
}
