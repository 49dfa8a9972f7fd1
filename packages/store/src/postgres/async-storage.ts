import type { Rollout } from '@agl/core/schema';
import type { StoreStorage } from '../engine/storage';
import type { AsyncRuleStorage } from '../engine/storage-ops';

/**
 * The storage calls of the store rules with every answer a promise ({@link AsyncRuleStorage}), bound to one open
 * transaction, plus what the offline tools (export, import) need. A database backend (PostgreSQL) implements it over
 * one pooled connection inside `BEGIN … COMMIT`; `AsyncRuleRunner` runs the rules on it.
 */
export interface AsyncStorageTx extends AsyncRuleStorage {
  /** True inside a write transaction: reads of rows that may be rewritten take row locks (`FOR UPDATE`). */
  readonly writable: boolean;
  /** Every per-rollout counter (for export). */
  listSequences(): Promise<Array<[rolloutId: string, value: number]>>;
  /** Queued ids, oldest first (for export and metrics). */
  listQueue(): Promise<string[]>;
  /** Sets the latest resources id without touching the documents (import). */
  setLatestResourcesId(resourcesId: string | null): Promise<void>;
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
    listNamedSpansOfAttempts: (refs, name) => p(() => s.listNamedSpansOfAttempts(refs, name)),
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
    putResources: (r, o) => p(() => s.putResources(r, o)),
    getLatestResourcesId: () => p(() => s.getLatestResourcesId()),
    setLatestResourcesId: (id) => p(() => extras.setLatestResourcesId(id)),
    listResources: () => p(() => s.listResources()),
    countResources: () => p(() => s.countResources()),
    getRelease: (id) => p(() => s.getRelease(id)),
    putRelease: (r) => p(() => s.putRelease(r)),
    listReleases: () => p(() => s.listReleases()),
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
