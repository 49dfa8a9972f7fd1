import type {
  Attempt,
  Release,
  ResourcesUpdate,
  Rollout,
  RolloutMode,
  RolloutStatus,
  Span,
  Worker,
} from '@agl/core/schema';
import type { AttemptRef, FilterLogic, SortOrder } from '@agl/core/store';
import type { TrafficRewardRow, TrafficRows, TrafficRowsQuery } from './traffic-rows';

/** One stored span as JSON text, with the sequence id spans are sorted by. */
export interface SpanDoc {
  sequenceId: number;
  doc: string;
}

/** A `queryRollouts` page that a backend may answer natively (see {@link StoreStorage.pageRollouts}). */
export interface RolloutPageQuery {
  statuses?: readonly RolloutStatus[];
  ids?: readonly string[];
  idContains?: string | null;
  modes?: readonly RolloutMode[];
  logic: FilterLogic;
  /** camelCase rollout field, or null for insertion order. */
  sortField: string | null;
  order: SortOrder;
  /** -1 = unlimited. */
  limit: number;
  offset: number;
}

/** Spans with their JSON documents (attribute maps apart) and attribute maps as text, from `serializeSpans`. */
export interface SerializedSpans {
  readonly spans: readonly Span[];
  readonly docs: readonly string[];
  readonly attributes: readonly string[];
}

/** What {@link StoreStorage.tryTransaction} returns when another connection holds the write lock (nothing ran). */
export const WRITE_LOCK_BUSY: unique symbol = Symbol('agl.store.writeLockBusy');

/**
 * The small, synchronous persistence interface of the memory and SQLite backends. A backend implements only storage:
 * no status rules, no validation. The rules (`store-rules.ts`, `queries.ts`) are generators that yield calls to these
 * methods (`storage-ops.ts`); `SyncRuleRunner` runs them here, and `AsyncRuleRunner` runs the same rules on PostgreSQL,
 * whose storage answers the same calls with promises. Every method may be called only inside
 * {@link StoreStorage.transaction} or {@link StoreStorage.read}.
 *
 * Objects returned are owned by the caller (copies); objects passed in are not retained by reference.
 *
 * Why synchronous: better-sqlite3 and memory maps are synchronous, so a whole operation runs inside one transaction
 * without yielding to the event loop; that makes every operation atomic within a process with no async locks.
 */
export interface StoreStorage {
  /** Human-readable backend name, reported by `statistics()`. */
  readonly name: string;

  /** Runs `fn` as one atomic write: either every change lands or none does (the error is rethrown). Re-entrant. */
  transaction<T>(fn: () => T): T;
  /** Runs `fn` with a consistent read view. Re-entrant (inside a transaction it just runs). */
  read<T>(fn: () => T): T;
  /**
   * Inside a transaction: runs `fn` so that a throw undoes only `fn`'s changes (the error is rethrown) and the rest of
   * the transaction goes on. Optional: storages that have it let the engine commit many calls at once (`runBatch`).
   */
  savepoint?<T>(fn: () => T): T;
  /**
   * Like {@link StoreStorage.transaction}, but when another connection holds the write lock it returns
   * {@link WRITE_LOCK_BUSY} at once, without running `fn`, instead of waiting. Optional: storages that other
   * connections share (SQLite files) have it, so the engine keeps this thread's event loop running while it waits.
   */
  tryTransaction?<T>(fn: () => T): T | typeof WRITE_LOCK_BUSY;

  // Rollouts (natural order = insertion order)
  getRollout(rolloutId: string): Rollout | null;
  /**
   * Optional: the rollouts among `rolloutIds` that exist, by id, read (and in a write transaction locked) in id order
   * with one statement. Lets a plan over many rollouts (a recorder's batch) read them all in one round trip; storages
   * where a read costs no round trip leave it out.
   */
  getRollouts?(rolloutIds: readonly string[]): Map<string, Rollout>;
  insertRollouts(rollouts: readonly Rollout[]): void;
  updateRollout(rollout: Rollout): void;
  /** Rollouts in insertion order, optionally only those with one of `statuses` or one of `ids`. */
  listRollouts(where?: { statuses?: readonly RolloutStatus[]; ids?: readonly string[] }): Rollout[];
  /** The ids among `rolloutIds` of rollouts that exist and are not terminal, without reading whole documents. */
  unfinishedRolloutIds(rolloutIds: readonly string[]): Set<string>;
  countRollouts(): number;
  /**
   * Optional fast path: filter, sort and paginate rollouts natively with the same semantics as the generic in-process
   * path (nulls last ascending, ties in insertion order, case-sensitive `contains`). Returns null when it cannot sort
   * on that field; the engine then filters in process.
   */
  pageRollouts?(query: RolloutPageQuery): { items: Rollout[]; total: number } | null;
  /**
   * Optional: the live-traffic counts and annotation spans of a window (`traffic-rows.ts`), aggregated by the backend
   * without reading every rollout. Storages without it leave the traffic view to the generic path.
   */
  trafficRows?(query: TrafficRowsQuery): TrafficRows;
  /**
   * Optional, with {@link StoreStorage.putTrafficRewards}, inside a write transaction: the hours in `[fromHour, toHour)`
   * whose traffic reward rollup a write made stale, their marks deleted (the caller recomputes them). Storages without a
   * reward rollup leave both out.
   */
  takeStaleTrafficHours?(fromHour: number, toHour: number): number[];
  /**
   * Optional, inside a write transaction: folds the committed delta rows of the hourly traffic counts of
   * `[fromHour, toHour)` into the counts (PostgreSQL keeps its counts as deltas that writers only insert).
   */
  compactTrafficHours?(fromHour: number, toHour: number): void;
  /** Replaces the reward rollup of `hours` (just taken) by `rows`, every row in one of them. */
  putTrafficRewards?(hours: readonly number[], rows: readonly TrafficRewardRow[]): void;

  // Attempts
  getAttempt(rolloutId: string, attemptId: string): Attempt | null;
  /** The attempt with the highest sequence id, or null. */
  getLatestAttempt(rolloutId: string): Attempt | null;
  /** Latest attempt of each given rollout that has one. */
  getLatestAttempts(rolloutIds: readonly string[]): Map<string, Attempt>;
  /** Attempts of one rollout by ascending sequence id. */
  listAttempts(rolloutId: string): Attempt[];
  countAttempts(): number;
  insertAttempt(attempt: Attempt): void;
  /** Optional: {@link StoreStorage.insertAttempt} for many, in one statement; returns how many. */
  insertAttempts?(attempts: readonly Attempt[]): number;
  updateAttempt(attempt: Attempt): void;

  // Spans
  /**
   * Inserts spans, skipping any whose (rolloutId, attemptId, spanId) already exists; returns those inserted. The spans'
   * attribute maps may be the caller's own objects: a storage that keeps objects stores a deep copy.
   */
  insertSpans(spans: readonly Span[]): Span[];
  /**
   * Serialises spans for {@link StoreStorage.insertSerializedSpans}; an attribute map may arrive as checked JSON text
   * (`attributesJson[i]`; null or absent: the span's own map), stored as it is. Pure (no storage access), so the engine
   * runs it when the spans are handed over, before taking the write lock. The spans' attribute maps may be the
   * caller's own objects: serialise them here, never keep them (the spans given back share them). Optional, with
   * `insertSerializedSpans`: storages that keep JSON text have them.
   */
  serializeSpans?(spans: readonly Span[], attributesJson?: ReadonlyArray<string | null>): SerializedSpans;
  /** `insertSpans` for spans serialised by {@link StoreStorage.serializeSpans}. */
  insertSerializedSpans?(serialized: SerializedSpans): Span[];
  /** Spans of a rollout (optionally one attempt) in insertion order. */
  listSpans(rolloutId: string, attemptId: string | null): Span[];
  /**
   * The same spans as stored JSON text (camelCase, as `JSON.stringify` wrote it) with their sequence ids, for answers
   * that only pass the spans on (see `querySpanDocs`); null when some document needs more than that (another schema
   * version). Optional: backends that do not keep JSON text leave it out.
   */
  listSpanDocs?(rolloutId: string, attemptId: string | null): SpanDoc[] | null;
  /**
   * Spans named `name` of any of `attempts` (distinct), each attempt's in insertion order, for `querySpansOfAttempts`
   * (which groups and sorts them). SQL storages answer with one statement.
   */
  listNamedSpansOfAttempts(attempts: readonly AttemptRef[], name: string): Span[];
  countSpans(): number;

  // Per-rollout span sequence counters
  /** Adds `count` to the counter (a missing one starts at 0) and returns the new value. */
  incrementSequence(rolloutId: string, count: number): number;
  /** Raises the counter to at least `value`. */
  raiseSequence(rolloutId: string, value: number): void;
  /** Optional: {@link StoreStorage.raiseSequence} for many counters (distinct ids), in one statement; returns how many. */
  raiseSequences?(raises: ReadonlyArray<readonly [rolloutId: string, value: number]>): number;

  // FIFO queue of rollout ids
  enqueue(rolloutIds: readonly string[]): void;
  /** Pops the oldest id, or null. */
  dequeue(): string | null;
  isQueued(rolloutId: string): boolean;
  /** Whether the queue holds any id (possibly a stale one that dequeue will skip). */
  hasQueued(): boolean;

  // Resources
  getResources(resourcesId: string): ResourcesUpdate | null;
  /** Inserts or replaces, and makes it the latest (unless `latest: false`: a release's candidate). */
  putResources(resources: ResourcesUpdate, options?: { latest?: boolean }): void;
  getLatestResourcesId(): string | null;
  /** Makes a stored resources version the latest (a release's promotion). */
  setLatestResourcesId(resourcesId: string): void;

  // Releases (Contract 4c)
  getRelease(releaseId: string): Release | null;
  /** Inserts or replaces. */
  putRelease(release: Release): void;
  /** Every release, oldest first. */
  listReleases(): Release[];
  listResources(): ResourcesUpdate[];
  countResources(): number;

  // Workers
  getWorker(workerId: string): Worker | null;
  putWorker(worker: Worker): void;
  listWorkers(): Worker[];
  countWorkers(): number;

  /**
   * Optional: takes a lock, held until the transaction ends, that lets one connection of those sharing the database
   * run the watchdog scan at a time; false when another holds it (the scan is then skipped). Storages one process owns
   * leave it out.
   */
  tryScanLock?(): boolean;

  /**
   * Optional: whether another connection (another process) committed since the last call. Lets waits sleep until
   * something changed instead of re-reading on every poll tick. Called outside transactions.
   */
  externalChanges?(): boolean;

  /** Releases the backend (close the database). */
  close(): void;
}
