import { StoreClosedError } from '@agl/core/errors';
import { TERMINAL_STATUSES } from '@agl/core/schema';
import type {
  Attempt,
  AttemptedRollout,
  EnqueueRolloutRequest,
  JsonObject,
  NamedResourcesInput,
  ResourcesUpdate,
  Rollout,
  Span,
  SpanInput,
  Worker,
} from '@agl/core/schema';
import type {
  AttemptUpdate,
  Clock,
  LightningStore,
  PageOptions,
  PaginatedResult,
  QueryResourcesOptions,
  QueryRolloutsOptions,
  QuerySpansOptions,
  QueryWorkersOptions,
  RolloutUpdate,
  StartRolloutRequest,
  StoreCapabilities,
  StoreStatistics,
} from '@agl/core/store';
import { IdSchema, WaitInput, parseApi } from './input';
import {
  queryAttempts,
  queryResources,
  queryRollouts,
  querySpanDocs,
  querySpans,
  queryWorkers,
  withLatestAttempts,
} from './queries';
import { QueueWaiters } from './queue-waiters';
import { RolloutWaiters } from './rollout-waiters';
import type { StoreStorage } from './storage';
import { StoreEngine } from './store-engine';

/** How long queued writes retry from the event loop while another connection holds the write lock, before waiting. */
const LOCK_YIELD_MS = 100;

/** Options every embedded store takes. */
export interface EngineStoreOptions {
  /** Time source (seconds since the epoch). Default: the wall clock. Inject a fake clock in tests. */
  clock?: Clock;
  /** Watchdog debounce in seconds; default 10, `0` = scan before every watchdog method. */
  scanDebounceSeconds?: number;
}

/** Internal wiring of an {@link EngineStore}. */
export interface EngineStoreParts {
  storage: StoreStorage;
  clock: Clock;
  scanDebounceSeconds: number;
  capabilities: StoreCapabilities;
  /**
   * Re-check interval of `waitForRollouts` / `waitForQueue` when other processes may change the store; `null` = events
   * only. With `storage.externalChanges`, a tick only wakes the waits when another connection committed.
   */
  waitPollMs: number | null;
  /** Class name shown in errors. */
  label: string;
}

/**
 * The async {@link LightningStore} over the shared synchronous {@link StoreEngine}: closed-state checks, the watchdog
 * before AGL's "W" methods, and event-driven `waitForRollouts`. `MemoryStore` and `SqliteStore` only choose a storage.
 */
export class EngineStore implements LightningStore {
  readonly capabilities: StoreCapabilities;
  readonly #engine: StoreEngine;
  readonly #waiters = new RolloutWaiters();
  readonly #queueWaiters = new QueueWaiters();
  #ticker: ReturnType<typeof setInterval> | null = null;
  readonly #clock: Clock;
  readonly #startedAt: number;
  readonly #pollMs: number | null;
  readonly #label: string;
  #closed = false;
  /** True while `close()` commits the writes still queued. */
  #closing = false;
  #pending: Array<{ job: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }> = [];
  #flushScheduled = false;
  /** When the queued batch first found the write lock taken (`performance.now()`), while it still does. */
  #lockBusySince: number | null = null;
  #lockRetries = 0;

  protected constructor(parts: EngineStoreParts) {
    this.capabilities = parts.capabilities;
    this.#clock = parts.clock;
    this.#startedAt = parts.clock.now();
    this.#pollMs = parts.waitPollMs;
    this.#label = parts.label;
    this.#engine = new StoreEngine({
      storage: parts.storage,
      clock: parts.clock,
      scanDebounceSeconds: parts.scanDebounceSeconds,
      onRolloutsChanged: (rollouts) => this.#waiters.notify(rollouts),
      onQueued: () => this.#queueWaiters.wakeAll(),
    });
  }

  /** The shared engine (for backend-specific tests and tools). @internal */
  protected get engine(): StoreEngine {
    return this.#engine;
  }

  #open(): StoreEngine {
    if (this.#closed) throw new StoreClosedError(this.#label);
    return this.#engine;
  }

  /**
   * Runs a write call. On storages with savepoints (SQLite) the calls made during one event-loop turn are queued and
   * committed together at its end (`StoreEngine.runBatch`): a commit writes every page a transaction touched to the WAL
   * (one dequeue: ~15 writes), and concurrent calls share those pages. Each call still succeeds or fails on its own, and
   * resolves once its changes are committed.
   */
  #write<T>(engine: StoreEngine, job: (engine: StoreEngine) => T): Promise<T> {
    if (!engine.batches) return new Promise((resolve) => resolve(job(engine)));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ job: () => job(engine), resolve: resolve as (value: unknown) => void, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(this.#scheduledFlush);
      }
    });
  }

  readonly #scheduledFlush = (): void => {
    this.#flushScheduled = false;
    this.#flush();
  };

  /**
   * Commits the queued writes. While another connection (a thread or process on the same file) holds the write lock,
   * the batch is retried from the event loop (next turn, then every millisecond) instead of blocking this thread in
   * SQLite's busy handler, so its other work goes on and the batch grows meanwhile; after {@link LOCK_YIELD_MS} it
   * waits for the lock as before (up to the busy timeout). `close()` always waits.
   */
  #flush(): void {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    if (this.#closed && !this.#closing) {
      for (const p of pending) p.reject(new StoreClosedError(this.#label));
      return;
    }
    const tryLock =
      this.#engine.storage.tryTransaction !== undefined &&
      !this.#closing &&
      (this.#lockBusySince === null || performance.now() - this.#lockBusySince < LOCK_YIELD_MS);
    const results =
      pending.length === 1 && !tryLock
        ? null
        : this.#engine.runBatch(
            pending.map((p) => p.job),
            { tryLock },
          );
    if (results === null && tryLock) {
      this.#pending = pending.concat(this.#pending);
      this.#lockBusySince ??= performance.now();
      this.#lockRetries += 1;
      this.#flushScheduled = true;
      if (this.#lockRetries <= 2) setImmediate(this.#scheduledFlush);
      else setTimeout(this.#scheduledFlush, 1);
      return;
    }
    this.#lockBusySince = null;
    this.#lockRetries = 0;
    if (results === null) {
      const [only] = pending;
      try {
        only!.resolve(only!.job());
      } catch (error) {
        only!.reject(error);
      }
      return;
    }
    results.forEach((result, i) => {
      if (result.ok) pending[i]!.resolve(result.value);
      else pending[i]!.reject(result.error);
    });
  }

  /** Open check plus the debounced watchdog (AGL's `healthcheck_before`). */
  #watched(): StoreEngine {
    const engine = this.#open();
    engine.maybeScan();
    return engine;
  }

  async startRollout(request: StartRolloutRequest): Promise<AttemptedRollout> {
    return this.#write(this.#watched(), (e) => e.startRollout(request));
  }

  async enqueueRollout(request: EnqueueRolloutRequest): Promise<Rollout> {
    const [rollout] = await this.#write(this.#watched(), (e) => e.enqueueRollouts([request]));
    return rollout!;
  }

  async enqueueRollouts(requests: EnqueueRolloutRequest[]): Promise<Rollout[]> {
    return this.#write(this.#watched(), (e) => e.enqueueRollouts(requests));
  }

  async dequeueRollout(options?: { workerId?: string | null }): Promise<AttemptedRollout | null> {
    const [claimed] = await this.#write(this.#watched(), (e) => e.dequeueRollouts({ ...(options ?? {}), limit: 1 }));
    return claimed ?? null;
  }

  async dequeueRollouts(options?: { limit?: number; workerId?: string | null }): Promise<AttemptedRollout[]> {
    return this.#write(this.#watched(), (e) => e.dequeueRollouts(options));
  }

  async startAttempt(rolloutId: string, options?: { workerId?: string | null }): Promise<AttemptedRollout> {
    return this.#write(this.#watched(), (e) => e.startAttempt(rolloutId, options));
  }

  async queryRollouts(options?: QueryRolloutsOptions): Promise<PaginatedResult<Rollout | AttemptedRollout>> {
    return this.#watched().read((s) => queryRollouts(s, options));
  }

  async getRolloutById(rolloutId: string): Promise<Rollout | AttemptedRollout | null> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    return this.#watched().read((s) => {
      const rollout = s.getRollout(id);
      return rollout ? withLatestAttempts(s, [rollout])[0]! : null;
    });
  }

  async queryAttempts(options: { rolloutId: string } & PageOptions): Promise<PaginatedResult<Attempt>> {
    return this.#watched().read((s) => queryAttempts(s, options));
  }

  async getLatestAttempt(rolloutId: string): Promise<Attempt | null> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    return this.#watched().read((s) => s.getLatestAttempt(id));
  }

  async updateRollout(rolloutId: string, update: RolloutUpdate): Promise<Rollout> {
    return this.#write(this.#watched(), (e) => e.updateRollout(rolloutId, update));
  }

  async updateAttempt(rolloutId: string, attemptId: string, update: AttemptUpdate): Promise<Attempt> {
    return this.#write(this.#watched(), (e) => e.updateAttempt(rolloutId, attemptId, update));
  }

  async addSpan(span: SpanInput): Promise<Span | null> {
    const [inserted] = await this.#addPrepared(this.#open(), [span]);
    return inserted ?? null;
  }

  async addSpans(spans: SpanInput[]): Promise<Span[]> {
    return this.#addPrepared(this.#open(), spans);
  }

  /**
   * `addSpans` for the store server's batch route: `attributesJson[i]` is span i's attribute map as JSON text already
   * checked against the span schema (`extractSpanAttributes`), stored as it is so the server never builds it as
   * objects; null entries use the span's own map. The returned spans carry empty attributes. Null when this store keeps
   * objects rather than JSON text (the memory store): then parse the maps and call `addSpans`.
   */
  addSpansWithAttributesJson(spans: SpanInput[], attributesJson: ReadonlyArray<string | null>): Promise<Span[]> | null {
    if (!this.#engine.storage.serializeSpans) return null;
    return this.#addPrepared(this.#open(), spans, attributesJson);
  }

  /** Checks and serialises the spans now, outside the write transaction, which then only inserts them. */
  async #addPrepared(
    engine: StoreEngine,
    spans: unknown,
    attributesJson?: ReadonlyArray<string | null>,
  ): Promise<Span[]> {
    const prepared = engine.prepareSpans(spans, attributesJson);
    return this.#write(engine, (e) => e.addPreparedSpans(prepared));
  }

  async getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    const [next] = await this.#write(this.#open(), (e) => e.nextSequenceIds([[rolloutId, attemptId]]));
    return next!;
  }

  async getNextSpanSequenceIds(pairs: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    return this.#write(this.#open(), (e) => e.nextSequenceIds(pairs));
  }

  async querySpans(options: QuerySpansOptions): Promise<PaginatedResult<Span>> {
    return this.#watched().read((s) => querySpans(s, options));
  }

  /**
   * `querySpans` answered with each span's stored JSON text (camelCase), for callers that only pass the spans on (the
   * store server writes them out with `toWireJson`). Null when the backend keeps no JSON text or the query filters or
   * sorts by anything but the sequence id; then use `querySpans`.
   */
  async querySpanDocs(options: QuerySpansOptions): Promise<PaginatedResult<string> | null> {
    return this.#watched().read((s) => querySpanDocs(s, options));
  }

  async addResources(resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return this.#write(this.#open(), (e) => e.addResources(resources));
  }

  async updateResources(resourcesId: string, resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return this.#write(this.#watched(), (e) => e.updateResources(resourcesId, resources));
  }

  async getLatestResources(): Promise<ResourcesUpdate | null> {
    return this.#open().read((s) => {
      const id = s.getLatestResourcesId();
      return id === null ? null : s.getResources(id);
    });
  }

  async getResourcesById(resourcesId: string): Promise<ResourcesUpdate | null> {
    const id = parseApi(IdSchema, resourcesId, 'resourcesId');
    return this.#open().read((s) => s.getResources(id));
  }

  async queryResources(options?: QueryResourcesOptions): Promise<PaginatedResult<ResourcesUpdate>> {
    return this.#open().read((s) => queryResources(s, options));
  }

  async updateWorker(workerId: string, update?: { heartbeatStats?: JsonObject }): Promise<Worker> {
    return this.#write(this.#open(), (e) => e.updateWorker(workerId, update));
  }

  async getWorkerById(workerId: string): Promise<Worker | null> {
    const id = parseApi(IdSchema, workerId, 'workerId');
    return this.#open().read((s) => s.getWorker(id));
  }

  async queryWorkers(options?: QueryWorkersOptions): Promise<PaginatedResult<Worker>> {
    return this.#watched().read((s) => queryWorkers(s, options));
  }

  async waitForRollouts(rolloutIds: string[], options?: { timeoutSeconds?: number | null }): Promise<Rollout[]> {
    const o = parseApi(
      WaitInput,
      { rolloutIds, timeoutSeconds: options?.timeoutSeconds ?? null },
      'waitForRollouts arguments',
    );
    const timeout = o.timeoutSeconds ?? null;
    const deadline = timeout === null ? null : Date.now() + timeout * 1000;
    for (;;) {
      const engine = this.#watched();
      const remaining = deadline === null ? null : deadline - Date.now();
      const last = remaining !== null && remaining <= 0;
      // While waiting, only the unfinished ids are read (no documents); the finished rollouts only once the wait ends.
      const outcome = engine.read((s) => {
        if (!last) {
          const pending = s.unfinishedRolloutIds(o.rolloutIds);
          if (pending.size > 0) return { pending };
        }
        const byId = new Map(
          s.listRollouts({ ids: o.rolloutIds, statuses: TERMINAL_STATUSES }).map((r) => [r.rolloutId, r]),
        );
        return { rollouts: o.rolloutIds.flatMap((id) => byId.get(id) ?? []) };
      });
      if (outcome.rollouts) return outcome.rollouts;
      this.#startTicker();
      await this.#waiters.wait(outcome.pending, remaining, this.#tickerMs === null ? this.#pollMs : null);
    }
  }

  /**
   * Resolves `true` as soon as rollouts may be queued (at once when the queue is not empty; else when this store, or
   * another process on the same file, enqueues), `false` after `timeoutMs` or when `signal` aborts. Lets idle runner
   * workers sleep instead of polling `dequeueRollout`.
   */
  async waitForQueue(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    const engine = this.#open();
    if (engine.read((s) => s.hasQueued())) return true;
    this.#startTicker();
    return this.#queueWaiters.wait(
      this.#tickerMs === null && this.#pollMs !== null ? Math.min(options.timeoutMs, this.#pollMs) : options.timeoutMs,
      options.signal,
    );
  }

  /** The shared re-check tick (storages that can tell when another process committed), or null. */
  get #tickerMs(): number | null {
    return this.#pollMs !== null && this.#engine.storage.externalChanges ? this.#pollMs : null;
  }

  /**
   * One timer for every wait: wakes them when another connection committed since the last tick (queue waits only when
   * something is queued). The first tick always checks (a commit between a wait's read and the baseline would
   * otherwise go unseen).
   */
  #startTicker(): void {
    const ms = this.#tickerMs;
    if (ms === null || this.#ticker !== null) return;
    let first = true;
    this.#ticker = setInterval(() => {
      if (this.#closed || (this.#waiters.size === 0 && this.#queueWaiters.size === 0)) {
        this.#stopTicker();
        return;
      }
      const changed = this.#engine.storage.externalChanges?.() === true;
      if (changed || first) {
        first = false;
        this.#waiters.wakeAll();
        // Idle runners only when there is something to dequeue: waking them for any other commit costs each one an
        // empty dequeue.
        if (this.#queueWaiters.size > 0 && this.#engine.read((s) => s.hasQueued())) this.#queueWaiters.wakeAll();
      }
    }, ms);
    this.#ticker.unref();
  }

  #stopTicker(): void {
    if (this.#ticker !== null) clearInterval(this.#ticker);
    this.#ticker = null;
  }

  async statistics(): Promise<StoreStatistics> {
    return this.#open().statistics(this.#startedAt);
  }

  /** Closes the store; later calls throw `StoreClosedError`. Waits in progress reject. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // Writes still queued for this turn's commit land first.
    this.#closing = true;
    try {
      this.#flush();
    } finally {
      this.#closing = false;
    }
    this.#stopTicker();
    this.#engine.storage.close();
    this.#waiters.wakeAll();
    this.#queueWaiters.wakeAll();
  }

  /** Seconds on this store's clock. @internal */
  protected now(): number {
    return this.#clock.now();
  }
}
