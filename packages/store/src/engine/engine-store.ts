import { StoreClosedError } from '@agl/core/errors';
import type { Rollout, Span, SpanInput } from '@agl/core/schema';
import type { Clock, PaginatedResult, QuerySpansOptions, StoreCapabilities, StoreStatistics } from '@agl/core/store';
import { finishedRollouts, querySpanDocs, statisticsRule } from './queries';
import { QueueWaiters } from './queue-waiters';
import { RolloutWaiters } from './rollout-waiters';
import { RuleStore, parseWait, type SpanSerializer, type Watch } from './rule-store';
import { WRITE_LOCK_BUSY, type StoreStorage } from './storage';
import { call, type Rule } from './storage-ops';
import type { Plan } from './store-rules';
import { SyncRuleRunner } from './sync-rule-runner';

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
 * The `LightningStore` of the synchronous storages: the store rules ({@link RuleStore}) run by a
 * {@link SyncRuleRunner}, writes of one event-loop turn committed together, and event-driven waits. `MemoryStore` and
 * `SqliteStore` only choose a storage.
 */
export class EngineStore extends RuleStore {
  readonly capabilities: StoreCapabilities;
  readonly #runner: SyncRuleRunner;
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
  #pending: Array<{ job: Plan<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }> = [];
  #flushScheduled = false;
  /** When the queued batch first found the write lock taken (`performance.now()`), while it still does. */
  #lockBusySince: number | null = null;
  #lockRetries = 0;

  protected constructor(parts: EngineStoreParts) {
    super();
    this.capabilities = parts.capabilities;
    this.#clock = parts.clock;
    this.#startedAt = parts.clock.now();
    this.#pollMs = parts.waitPollMs;
    this.#label = parts.label;
    this.#runner = new SyncRuleRunner({
      storage: parts.storage,
      clock: parts.clock,
      scanDebounceSeconds: parts.scanDebounceSeconds,
      onRolloutsChanged: (rollouts) => this.#waiters.notify(rollouts),
      onQueued: () => this.#queueWaiters.wakeAll(),
    });
  }

  /** The rule runner (for backend-specific tests and tools). @internal */
  protected get runner(): SyncRuleRunner {
    return this.#runner;
  }

  /** Open check plus, for AGL's "W" methods, the debounced watchdog (`healthcheck_before`). */
  #open(watch: Watch): SyncRuleRunner {
    if (this.#closed) throw new StoreClosedError(this.#label);
    if (watch === 'watched') this.#runner.maybeScan();
    return this.#runner;
  }

  protected async read<T>(watch: Watch, make: () => Rule<T>): Promise<T> {
    return this.#open(watch).read(make());
  }

  protected get spanSerializer(): SpanSerializer | undefined {
    return this.#runner.storage.serializeSpans?.bind(this.#runner.storage);
  }

  /**
   * Runs a write call. On storages with savepoints (SQLite) the calls made during one event-loop turn are queued and
   * committed together at its end (`SyncRuleRunner.runBatch`): a commit writes every page a transaction touched to the
   * WAL (one dequeue: ~15 writes), and concurrent calls share those pages. Each call still succeeds or fails on its own,
   * and resolves once its changes are committed.
   */
  protected async write<T>(watch: Watch, make: () => Plan<T>): Promise<T> {
    const runner = this.#open(watch);
    const plan = make();
    if (!runner.batches) return runner.write(plan);
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ job: plan, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(this.#scheduledFlush);
      }
    });
  }

  /**
   * A write plan in a transaction of its own, committed at once (after the writes queued so far, which keep their
   * order): for plans with many writes, which a savepoint inside the turn's shared transaction would make dearer.
   * While another connection holds the write lock it retries from the event loop, as {@link EngineStore.write}'s
   * batches do, and waits in SQLite's busy handler only after {@link LOCK_YIELD_MS}.
   */
  protected override async writeAlone<T>(watch: Watch, make: () => Plan<T>): Promise<T> {
    const runner = this.#open(watch);
    const plan = make();
    if (!runner.batches) return runner.write(plan);
    if (this.#pending.length > 0) this.#flush();
    const since = performance.now();
    for (let tries = 0; ; tries += 1) {
      if (this.#closed) throw new StoreClosedError(this.#label);
      const result = performance.now() - since < LOCK_YIELD_MS ? runner.tryWrite(plan) : runner.write(plan);
      if (result !== WRITE_LOCK_BUSY) return result;
      await new Promise<void>((resolve) => (tries < 2 ? setImmediate(resolve) : setTimeout(resolve, 1)));
    }
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
      this.#runner.storage.tryTransaction !== undefined &&
      !this.#closing &&
      (this.#lockBusySince === null || performance.now() - this.#lockBusySince < LOCK_YIELD_MS);
    const results =
      pending.length === 1 && !tryLock
        ? null
        : this.#runner.runBatch(
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
        only!.resolve(this.#runner.write(only!.job));
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

  /**
   * `addSpans` for the store server's batch route: `attributesJson[i]` is span i's attribute map as JSON text already
   * checked against the span schema (`extractSpanAttributes`), stored as it is so the server never builds it as
   * objects; null entries use the span's own map. The returned spans carry empty attributes. Null when this store keeps
   * objects rather than JSON text (the memory store): then parse the maps and call `addSpans`.
   */
  addSpansWithAttributesJson(spans: SpanInput[], attributesJson: ReadonlyArray<string | null>): Promise<Span[]> | null {
    if (!this.#runner.storage.serializeSpans) return null;
    return this.addSpansPrepared(spans, attributesJson);
  }

  /**
   * `querySpans` answered with each span's stored JSON text (camelCase), for callers that only pass the spans on (the
   * store server writes them out with `toWireJson`). Null when the backend keeps no JSON text or the query filters or
   * sorts by anything but the sequence id; then use `querySpans`.
   */
  async querySpanDocs(options: QuerySpansOptions): Promise<PaginatedResult<string> | null> {
    return this.read('watched', () => querySpanDocs(options));
  }

  async waitForRollouts(rolloutIds: string[], options?: { timeoutSeconds?: number | null }): Promise<Rollout[]> {
    const o = parseWait(rolloutIds, options);
    for (;;) {
      const runner = this.#open('watched');
      const remaining = o.deadline === null ? null : o.deadline - Date.now();
      const last = remaining !== null && remaining <= 0;
      // While waiting, only the unfinished ids are read (no documents); the finished rollouts only once the wait ends.
      const outcome = runner.read(
        (function* () {
          if (!last) {
            const pending = yield* call('unfinishedRolloutIds', o.rolloutIds);
            if (pending.size > 0) return { pending };
          }
          return { rollouts: yield* finishedRollouts(o.rolloutIds) };
        })(),
      );
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
    if (this.#open('unwatched').read(call('hasQueued'))) return true;
    this.#startTicker();
    return this.#queueWaiters.wait(
      this.#tickerMs === null && this.#pollMs !== null ? Math.min(options.timeoutMs, this.#pollMs) : options.timeoutMs,
      options.signal,
    );
  }

  /** The shared re-check tick (storages that can tell when another process committed), or null. */
  get #tickerMs(): number | null {
    return this.#pollMs !== null && this.#runner.storage.externalChanges ? this.#pollMs : null;
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
      const changed = this.#runner.storage.externalChanges?.() === true;
      if (changed || first) {
        first = false;
        this.#waiters.wakeAll();
        // Idle runners only when there is something to dequeue: waking them for any other commit costs each one an
        // empty dequeue.
        if (this.#queueWaiters.size > 0 && this.#runner.read(call('hasQueued'))) this.#queueWaiters.wakeAll();
      }
    }, ms);
    this.#ticker.unref();
  }

  #stopTicker(): void {
    if (this.#ticker !== null) clearInterval(this.#ticker);
    this.#ticker = null;
  }

  async statistics(): Promise<StoreStatistics> {
    const storage = this.#open('unwatched').storage;
    return this.read('unwatched', () => statisticsRule(storage.name, this.#clock.now() - this.#startedAt));
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
    this.#runner.storage.close();
    this.#waiters.wakeAll();
    this.#queueWaiters.wakeAll();
  }

  /** Seconds on this store's clock. @internal */
  protected now(): number {
    return this.#clock.now();
  }

  protected override releaseClock(): number {
    return this.#clock.now();
  }
}
