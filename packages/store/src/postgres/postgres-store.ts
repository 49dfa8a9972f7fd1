import { StoreClosedError } from '@agl/core/errors';
import {
  TERMINAL_STATUSES,
  type Attempt,
  type AttemptedRollout,
  type EnqueueRolloutRequest,
  type JsonObject,
  type NamedResourcesInput,
  type ResourcesUpdate,
  type Rollout,
  type Span,
  type SpanInput,
  type Worker,
} from '@agl/core/schema';
import {
  systemClock,
  type AttemptUpdate,
  type Clock,
  type LightningStore,
  type PageOptions,
  type PaginatedResult,
  type QueryResourcesOptions,
  type QueryRolloutsOptions,
  type QuerySpansOptions,
  type QueryWorkersOptions,
  type RolloutUpdate,
  type StartRolloutRequest,
  type StoreCapabilities,
  type StoreStatistics,
} from '@agl/core/store';
import { IdSchema, WaitInput, parseApi } from '../engine/input';
import { QueueWaiters } from '../engine/queue-waiters';
import { RolloutWaiters } from '../engine/rollout-waiters';
import {
  queryAttempts,
  queryResources,
  queryRollouts,
  querySpans,
  queryWorkers,
  withLatestAttempts,
} from './async-queries';
import { AsyncStoreEngine } from './async-store-engine';
import { PgDatabase, redactUrl, type PgConnectionOptions } from './pg-database';
import { migratePg } from './pg-migrations';
import { PgNotifier } from './pg-notifier';
import type { ChangeNotice, PgStorageTx } from './pg-storage';

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions extends PgConnectionOptions {
  /** Time source (seconds since the epoch). Default: the wall clock. */
  clock?: Clock;
  /** Watchdog debounce in seconds; default 10, `0` = scan before every watchdog method. */
  scanDebounceSeconds?: number;
  /**
   * Safety-net re-check of `waitForRollouts` in ms, for the moments the LISTEN connection is down; NOTIFY wakes
   * waiters at once otherwise. Default 5000.
   */
  waitPollIntervalMs?: number;
}

/**
 * A {@link LightningStore} on PostgreSQL, for several `agl store serve` processes (or trainers) sharing one database.
 * Same semantics as `SqliteStore` (the shared rules, translated to an async engine); dequeue pops the queue with
 * `FOR UPDATE SKIP LOCKED` so each rollout is claimed exactly once across servers; span batches are one multi-row
 * insert; `LISTEN/NOTIFY` wakes `waitForRollouts` (and {@link PostgresStore.waitForQueue}) on every server; the
 * watchdog runs under an advisory lock so only one server scans at a time. Requires the optional peer `pg`.
 *
 * @example
 * const store = await PostgresStore.open({ connectionString: 'postgres://agl@db:5432/agl' });
 * await store.enqueueRollout({ input: { question: '1+1' } });
 * await store.close();
 */
export class PostgresStore implements LightningStore {
  readonly capabilities: StoreCapabilities = { threadSafe: true, asyncSafe: true, zeroCopy: true, otlpTraces: false };
  /** The connection string with the password masked. */
  readonly url: string;
  readonly #db: PgDatabase;
  readonly #engine: AsyncStoreEngine;
  readonly #waiters = new RolloutWaiters();
  readonly #queueWaiters = new QueueWaiters();
  readonly #notifier: PgNotifier;
  readonly #clock: Clock;
  readonly #startedAt: number;
  readonly #pollMs: number;
  #ready: Promise<void>;
  #closed = false;
  /** Bumped by every rollout change heard (local or NOTIFY): a wait re-reads when one arrived during its read. */
  #changes = 0;

  /**
   * Creates the store; the first call migrates the schema and starts listening (awaited by every method). Prefer
   * {@link PostgresStore.open}, which surfaces connection errors at once.
   */
  constructor(options: PostgresStoreOptions) {
    this.#db = new PgDatabase(options);
    this.url = redactUrl(options.connectionString);
    this.#clock = options.clock ?? systemClock;
    this.#startedAt = this.#clock.now();
    this.#pollMs = options.waitPollIntervalMs ?? 5000;
    this.#engine = new AsyncStoreEngine({
      db: this.#db,
      clock: this.#clock,
      scanDebounceSeconds: options.scanDebounceSeconds ?? 10,
      onRolloutsChanged: (rollouts) => {
        this.#changes += 1;
        this.#waiters.notify(rollouts);
      },
      tryScanLock: (tx) => (tx as PgStorageTx).tryAdvisoryLock('watchdog'),
    });
    this.#notifier = new PgNotifier({
      url: this.#db.url,
      channel: this.#db.channel,
      onNotice: (notice) => this.#onNotice(notice),
      onReconnect: () => {
        this.#waiters.wakeAll();
        this.#queueWaiters.wakeAll();
      },
    });
    this.#ready = this.#init();
    this.#ready.catch(() => undefined); // surfaced by the first call (or by open())
  }

  /** Connects, migrates and listens; throws a {@link ConnectionError} naming the URL when the database is unreachable. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    try {
      await store.#ready;
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
    return store;
  }

  async #init(): Promise<void> {
    const client = await this.#db.connect();
    try {
      await migratePg(client, this.#db.schema, this.url);
    } finally {
      client.release();
    }
    await this.#notifier.start();
  }

  /** The schema holding the tables. */
  get schema(): string {
    return this.#db.schema;
  }

  /** Transactions re-run after serialization failures or deadlocks so far. */
  get retries(): number {
    return this.#db.retries;
  }

  /** The underlying database (for the ops tools). @internal */
  get database(): PgDatabase {
    return this.#db;
  }

  #onNotice(notice: ChangeNotice): void {
    if (notice.r && notice.r.length > 0) {
      this.#changes += 1;
      this.#waiters.notify(notice.r.map(([rolloutId, status]) => ({ rolloutId, status }) as Rollout));
    }
    if (notice.q) this.#queueWaiters.wakeAll();
  }

  async #open(): Promise<AsyncStoreEngine> {
    if (this.#closed) throw new StoreClosedError(`PostgresStore(${this.url})`);
    await this.#ready;
    if (this.#closed) throw new StoreClosedError(`PostgresStore(${this.url})`);
    return this.#engine;
  }

  async #watched(): Promise<AsyncStoreEngine> {
    const engine = await this.#open();
    await engine.maybeScan();
    return engine;
  }

  /**
   * Resolves `true` at once while rollouts are queued, else when some server enqueues one (NOTIFY); `false` after `timeoutMs` or when `signal` aborts:
   * lets a dequeue loop sleep without polling the database.
   */
  async waitForQueue(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    const engine = await this.#open();
    const since = this.#queueWaiters.generation; // a NOTIFY heard during the read below must not be lost
    if (await engine.read((s) => s.hasQueued())) return true;
    return this.#queueWaiters.wait(options.timeoutMs, options.signal, since);
  }

  async startRollout(request: StartRolloutRequest): Promise<AttemptedRollout> {
    return (await this.#watched()).startRollout(request);
  }

  async enqueueRollout(request: EnqueueRolloutRequest): Promise<Rollout> {
    const [rollout] = await (await this.#watched()).enqueueRollouts([request]);
    return rollout!;
  }

  async enqueueRollouts(requests: EnqueueRolloutRequest[]): Promise<Rollout[]> {
    return (await this.#watched()).enqueueRollouts(requests);
  }

  async dequeueRollout(options?: { workerId?: string | null }): Promise<AttemptedRollout | null> {
    const [claimed] = await (await this.#watched()).dequeueRollouts({ ...(options ?? {}), limit: 1 });
    return claimed ?? null;
  }

  async dequeueRollouts(options?: { limit?: number; workerId?: string | null }): Promise<AttemptedRollout[]> {
    return (await this.#watched()).dequeueRollouts(options);
  }

  async startAttempt(rolloutId: string, options?: { workerId?: string | null }): Promise<AttemptedRollout> {
    return (await this.#watched()).startAttempt(rolloutId, options);
  }

  async queryRollouts(options?: QueryRolloutsOptions): Promise<PaginatedResult<Rollout | AttemptedRollout>> {
    return (await this.#watched()).read((s) => queryRollouts(s, options));
  }

  async getRolloutById(rolloutId: string): Promise<Rollout | AttemptedRollout | null> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    return (await this.#watched()).read(async (s) => {
      const rollout = await s.getRollout(id);
      return rollout ? (await withLatestAttempts(s, [rollout]))[0]! : null;
    });
  }

  async queryAttempts(options: { rolloutId: string } & PageOptions): Promise<PaginatedResult<Attempt>> {
    return (await this.#watched()).read((s) => queryAttempts(s, options));
  }

  async getLatestAttempt(rolloutId: string): Promise<Attempt | null> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    return (await this.#watched()).read((s) => s.getLatestAttempt(id));
  }

  async updateRollout(rolloutId: string, update: RolloutUpdate): Promise<Rollout> {
    return (await this.#watched()).updateRollout(rolloutId, update);
  }

  async updateAttempt(rolloutId: string, attemptId: string, update: AttemptUpdate): Promise<Attempt> {
    return (await this.#watched()).updateAttempt(rolloutId, attemptId, update);
  }

  async addSpan(span: SpanInput): Promise<Span | null> {
    const [inserted] = await (await this.#open()).addSpans([span]);
    return inserted ?? null;
  }

  async addSpans(spans: SpanInput[]): Promise<Span[]> {
    return (await this.#open()).addSpans(spans);
  }

  async getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    const [next] = await (await this.#open()).nextSequenceIds([[rolloutId, attemptId]]);
    return next!;
  }

  async getNextSpanSequenceIds(pairs: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    return (await this.#open()).nextSequenceIds(pairs);
  }

  async querySpans(options: QuerySpansOptions): Promise<PaginatedResult<Span>> {
    return (await this.#watched()).read((s) => querySpans(s, options));
  }

  async addResources(resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return (await this.#open()).addResources(resources);
  }

  async updateResources(resourcesId: string, resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return (await this.#watched()).updateResources(resourcesId, resources);
  }

  async getLatestResources(): Promise<ResourcesUpdate | null> {
    return (await this.#open()).read(async (s) => {
      const id = await s.getLatestResourcesId();
      return id === null ? null : s.getResources(id);
    });
  }

  async getResourcesById(resourcesId: string): Promise<ResourcesUpdate | null> {
    const id = parseApi(IdSchema, resourcesId, 'resourcesId');
    return (await this.#open()).read((s) => s.getResources(id));
  }

  async queryResources(options?: QueryResourcesOptions): Promise<PaginatedResult<ResourcesUpdate>> {
    return (await this.#open()).read((s) => queryResources(s, options));
  }

  async updateWorker(workerId: string, update?: { heartbeatStats?: JsonObject }): Promise<Worker> {
    return (await this.#open()).updateWorker(workerId, update);
  }

  async getWorkerById(workerId: string): Promise<Worker | null> {
    const id = parseApi(IdSchema, workerId, 'workerId');
    return (await this.#open()).read((s) => s.getWorker(id));
  }

  async queryWorkers(options?: QueryWorkersOptions): Promise<PaginatedResult<Worker>> {
    return (await this.#watched()).read((s) => queryWorkers(s, options));
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
      const engine = await this.#watched();
      const seen = this.#changes;
      const remaining = deadline === null ? null : deadline - Date.now();
      // While waiting, only the unfinished ids' statuses are read; the finished rollouts' documents only at the end.
      if (!((remaining !== null && remaining <= 0) || this.#closed)) {
        const pending = await engine.read((s) => s.unfinishedRolloutIds(o.rolloutIds));
        if (pending.size > 0) {
          if (this.#changes !== seen) continue; // a change arrived while we read: its wake-up may have been missed
          await this.#waiters.wait(pending, remaining, this.#pollMs);
          continue;
        }
      }
      const finished = await engine.read((s) => s.listRollouts({ ids: o.rolloutIds, statuses: TERMINAL_STATUSES }));
      const byId = new Map(finished.map((r) => [r.rolloutId, r]));
      return o.rolloutIds.flatMap((id) => byId.get(id) ?? []);
    }
  }

  async statistics(): Promise<StoreStatistics> {
    return (await this.#open()).statistics(this.#startedAt);
  }

  /** Queue depth and rollouts per status, in one read (for `/metrics`). */
  async gauges(): Promise<{ queueDepth: number; rolloutsByStatus: Record<string, number> }> {
    await this.#open();
    const client = await this.#db.connect();
    try {
      const s = this.#db.qschema;
      const q = await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${s}.rollout_queue`);
      const r = await client.query<{ status: string; n: string }>(
        `SELECT status, COUNT(*) AS n FROM ${s}.rollouts GROUP BY status`,
      );
      return {
        queueDepth: Number(q.rows[0]?.n ?? 0),
        rolloutsByStatus: Object.fromEntries(r.rows.map((row) => [row.status, Number(row.n)])),
      };
    } finally {
      client.release();
    }
  }

  /** Closes the pool and the LISTEN connection; later calls throw `StoreClosedError`. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiters.wakeAll();
    this.#queueWaiters.wakeAll();
    await this.#ready.catch(() => undefined);
    await this.#notifier.close();
    await this.#db.close();
  }
}
