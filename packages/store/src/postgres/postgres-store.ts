import { StoreClosedError } from '@agl/core/errors';
import type { Rollout } from '@agl/core/schema';
import { systemClock, type Clock, type StoreCapabilities, type StoreStatistics } from '@agl/core/store';
import { finishedRollouts, statisticsRule } from '../engine/queries';
import { QueueWaiters } from '../engine/queue-waiters';
import { RolloutWaiters } from '../engine/rollout-waiters';
import { RuleStore, parseWait, type SpanSerializer, type Watch } from '../engine/rule-store';
import { call, type Rule } from '../engine/storage-ops';
import type { Plan } from '../engine/store-rules';
import { AsyncRuleRunner } from './async-rule-runner';
import { PgDatabase, redactUrl, type PgConnectionOptions } from './pg-database';
import { migratePg } from './pg-migrations';
import { PgNotifier } from './pg-notifier';
import type { ChangeNotice } from './pg-storage';

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
 * Same rules as `SqliteStore` ({@link RuleStore}, run by an {@link AsyncRuleRunner}); dequeue pops the queue with
 * `FOR UPDATE SKIP LOCKED` so each rollout is claimed exactly once across servers; span batches are one multi-row
 * insert; `LISTEN/NOTIFY` wakes `waitForRollouts` (and {@link PostgresStore.waitForQueue}) on every server; the
 * watchdog runs under an advisory lock so only one server scans at a time. Requires the optional peer `pg`.
 *
 * @example
 * const store = await PostgresStore.open({ connectionString: 'postgres://agl@db:5432/agl' });
 * await store.enqueueRollout({ input: { question: '1+1' } });
 * await store.close();
 */
export class PostgresStore extends RuleStore {
  readonly capabilities: StoreCapabilities = { threadSafe: true, asyncSafe: true, zeroCopy: true, otlpTraces: false };
  /** The connection string with the password masked. */
  readonly url: string;
  readonly #db: PgDatabase;
  readonly #runner: AsyncRuleRunner;
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
    super();
    this.#db = new PgDatabase(options);
    this.url = redactUrl(options.connectionString);
    this.#clock = options.clock ?? systemClock;
    this.#startedAt = this.#clock.now();
    this.#pollMs = options.waitPollIntervalMs ?? 5000;
    this.#runner = new AsyncRuleRunner({
      db: this.#db,
      clock: this.#clock,
      scanDebounceSeconds: options.scanDebounceSeconds ?? 10,
      onRolloutsChanged: (rollouts) => {
        this.#changes += 1;
        this.#waiters.notify(rollouts);
      },
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

  async #open(watch: Watch): Promise<AsyncRuleRunner> {
    if (this.#closed) throw new StoreClosedError(`PostgresStore(${this.url})`);
    await this.#ready;
    if (this.#closed) throw new StoreClosedError(`PostgresStore(${this.url})`);
    if (watch === 'watched') await this.#runner.maybeScan();
    return this.#runner;
  }

  protected async write<T>(watch: Watch, make: () => Plan<T>): Promise<T> {
    return (await this.#open(watch)).write(make());
  }

  protected async read<T>(watch: Watch, make: () => Rule<T>): Promise<T> {
    return (await this.#open(watch)).read(make);
  }

  /** PostgreSQL keeps spans as `jsonb`, not as the JSON text it was given. */
  protected get spanSerializer(): SpanSerializer | undefined {
    return undefined;
  }

  /**
   * Resolves `true` at once while rollouts are queued, else when some server enqueues one (NOTIFY); `false` after `timeoutMs` or when `signal` aborts:
   * lets a dequeue loop sleep without polling the database.
   */
  async waitForQueue(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    const runner = await this.#open('unwatched');
    const since = this.#queueWaiters.generation; // a NOTIFY heard during the read below must not be lost
    if (await runner.read(() => call('hasQueued'))) return true;
    return this.#queueWaiters.wait(options.timeoutMs, options.signal, since);
  }

  async waitForRollouts(rolloutIds: string[], options?: { timeoutSeconds?: number | null }): Promise<Rollout[]> {
    const o = parseWait(rolloutIds, options);
    for (;;) {
      const runner = await this.#open('watched');
      const seen = this.#changes;
      const remaining = o.deadline === null ? null : o.deadline - Date.now();
      // While waiting, only the unfinished ids' statuses are read; the finished rollouts' documents only at the end.
      if (!((remaining !== null && remaining <= 0) || this.#closed)) {
        const pending = await runner.read(() => call('unfinishedRolloutIds', o.rolloutIds));
        if (pending.size > 0) {
          if (this.#changes !== seen) continue; // a change arrived while we read: its wake-up may have been missed
          await this.#waiters.wait(pending, remaining, this.#pollMs);
          continue;
        }
      }
      return runner.read(() => finishedRollouts(o.rolloutIds));
    }
  }

  async statistics(): Promise<StoreStatistics> {
    return this.read('unwatched', () => statisticsRule(this.#db.name, this.#clock.now() - this.#startedAt));
  }

  /** Queue depth and rollouts per status, in one read (for `/metrics`). */
  async gauges(): Promise<{ queueDepth: number; rolloutsByStatus: Record<string, number> }> {
    await this.#open('unwatched');
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

  protected override releaseClock(): number {
    return this.#clock.now();
  }
}
