import type { Attempt, ResourcesUpdate, Rollout, RolloutStatus, Span, Worker } from '@agl/core/schema';
import type { RolloutPageQuery, StoreStorage } from '../engine/storage';

/**
 * The asynchronous twin of {@link StoreStorage}: the same persistence methods, each returning a promise, bound to one
 * open transaction. {@link AsyncStoreEngine} runs the shared business logic on it; a database backend (PostgreSQL)
 * implements it over one pooled connection inside `BEGIN … COMMIT`.
 */
export interface AsyncStorageTx {
  /** True inside a write transaction: reads of rows that may be rewritten take row locks (`FOR UPDATE`). */
  readonly writable: boolean;

  getRollout(rolloutId: string): Promise<Rollout | null>;
  insertRollouts(rollouts: readonly Rollout[]): Promise<void>;
  updateRollout(rollout: Rollout): Promise<void>;
  listRollouts(where?: { statuses?: readonly RolloutStatus[]; ids?: readonly string[] }): Promise<Rollout[]>;
  /** See the sync `StoreStorage.unfinishedRolloutIds`. */
  unfinishedRolloutIds(rolloutIds: readonly string[]): Promise<Set<string>>;
  countRollouts(): Promise<number>;
  pageRollouts?(query: RolloutPageQuery): Promise<{ items: Rollout[]; total: number } | null>;

  getAttempt(rolloutId: string, attemptId: string): Promise<Attempt | null>;
  getLatestAttempt(rolloutId: string): Promise<Attempt | null>;
  getLatestAttempts(rolloutIds: readonly string[]): Promise<Map<string, Attempt>>;
  listAttempts(rolloutId: string): Promise<Attempt[]>;
  countAttempts(): Promise<number>;
  insertAttempt(attempt: Attempt): Promise<void>;
  updateAttempt(attempt: Attempt): Promise<void>;

  insertSpans(spans: readonly Span[]): Promise<Span[]>;
  listSpans(rolloutId: string, attemptId: string | null): Promise<Span[]>;
  countSpans(): Promise<number>;

  incrementSequence(rolloutId: string, count: number): Promise<number>;
  raiseSequence(rolloutId: string, value: number): Promise<void>;
  /** Every per-rollout counter (for export). */
  listSequences(): Promise<Array<[rolloutId: string, value: number]>>;

  enqueue(rolloutIds: readonly string[]): Promise<void>;
  dequeue(): Promise<string | null>;
  isQueued(rolloutId: string): Promise<boolean>;
  /** Whether the queue holds any id. */
  hasQueued(): Promise<boolean>;
  /** Queued ids, oldest first (for export and metrics). */
  listQueue(): Promise<string[]>;

  getResources(resourcesId: string): Promise<ResourcesUpdate | null>;
  putResources(resources: ResourcesUpdate): Promise<void>;
  getLatestResourcesId(): Promise<string | null>;
  /** Sets the latest resources id without touching the documents (import). */
  setLatestResourcesId(resourcesId: string | null): Promise<void>;
  listResources(): Promise<ResourcesUpdate[]>;
  countResources(): Promise<number>;

  getWorker(workerId: string): Promise<Worker | null>;
  putWorker(worker: Worker): Promise<void>;
  listWorkers(): Promise<Worker[]>;
  countWorkers(): Promise<number>;

  /**
   * Announces rollouts whose status changed in this transaction (delivered to every server on commit, e.g. with
   * PostgreSQL NOTIFY). Optional.
   */
  publishChanges?(rollouts: readonly Rollout[], enqueued: number): Promise<void>;
}

/** Opens transactions on an asynchronous backend. */
export interface AsyncStoreDatabase {
  readonly name: string;
  /** Runs `fn` in one write transaction; may re-run it after a serialization failure or deadlock. */
  transaction<T>(fn: (tx: AsyncStorageTx) => Promise<T>): Promise<T>;
  /** Runs `fn` with a consistent read view. */
  read<T>(fn: (tx: AsyncStorageTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** What {@link asyncOverSync} needs beyond {@link StoreStorage}: raw transaction control and three introspection reads. */
export interface SyncStorageExtras {
  /** Opens a transaction that stays open across awaits (offline tools own the connection). */
  begin(write: boolean): void;
  commit(): void;
  rollback(): void;
  listQueue(): string[];
  listSequences(): Array<[string, number]>;
  setLatestResourcesId(id: string | null): void;
}

/**
 * Adapts a synchronous {@link StoreStorage} (SQLite) to {@link AsyncStoreDatabase}, so offline tools written once
 * against the async interface (export, import, prune) run on every persistent backend. Transactions are opened with
 * `extras.begin` and stay open across the awaits of `fn`: use it only where nothing else shares the connection.
 */
export function asyncOverSync(storage: StoreStorage, extras: SyncStorageExtras): AsyncStoreDatabase {
  const s = storage;
  const p = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  };
  const tx = (writable: boolean): AsyncStorageTx => ({
    writable,
    getRollout: (id) => p(() => s.getRollout(id)),
    insertRollouts: (r) => p(() => s.insertRollouts(r)),
    updateRollout: (r) => p(() => s.updateRollout(r)),
    listRollouts: (w) => p(() => s.listRollouts(w)),
    unfinishedRolloutIds: (ids) => p(() => s.unfinishedRolloutIds(ids)),
    countRollouts: () => p(() => s.countRollouts()),
    getAttempt: (r, a) => p(() => s.getAttempt(r, a)),
    getLatestAttempt: (r) => p(() => s.getLatestAttempt(r)),
    getLatestAttempts: (ids) => p(() => s.getLatestAttempts(ids)),
    listAttempts: (r) => p(() => s.listAttempts(r)),
    countAttempts: () => p(() => s.countAttempts()),
    insertAttempt: (a) => p(() => s.insertAttempt(a)),
    updateAttempt: (a) => p(() => s.updateAttempt(a)),
    insertSpans: (spans) => p(() => s.insertSpans(spans)),
    listSpans: (r, a) => p(() => s.listSpans(r, a)),
    countSpans: () => p(() => s.countSpans()),
    incrementSequence: (r, c) => p(() => s.incrementSequence(r, c)),
    raiseSequence: (r, v) => p(() => s.raiseSequence(r, v)),
    listSequences: () => p(() => extras.listSequences()),
    enqueue: (ids) => p(() => s.enqueue(ids)),
    dequeue: () => p(() => s.dequeue()),
    isQueued: (id) => p(() => s.isQueued(id)),
    hasQueued: () => p(() => s.hasQueued()),
    listQueue: () => p(() => extras.listQueue()),
    getResources: (id) => p(() => s.getResources(id)),
    putResources: (r) => p(() => s.putResources(r)),
    getLatestResourcesId: () => p(() => s.getLatestResourcesId()),
    setLatestResourcesId: (id) => p(() => extras.setLatestResourcesId(id)),
    listResources: () => p(() => s.listResources()),
    countResources: () => p(() => s.countResources()),
    getWorker: (id) => p(() => s.getWorker(id)),
    putWorker: (w) => p(() => s.putWorker(w)),
    listWorkers: () => p(() => s.listWorkers()),
    countWorkers: () => p(() => s.countWorkers()),
  });
  const run = async <T>(write: boolean, fn: (t: AsyncStorageTx) => Promise<T>): Promise<T> => {
    extras.begin(write);
    try {
      const result = await fn(tx(write));
      extras.commit();
      return result;
    } catch (error) {
      extras.rollback();
      throw error;
    }
  };
  return {
    name: storage.name,
    transaction: (fn) => run(true, fn),
    read: (fn) => run(false, fn),
    close: () => p(() => storage.close()),
  };
}
