import Database from 'better-sqlite3';
import { UserError } from '@agl/core/errors';
import { systemClock } from '@agl/core/store';
import { EngineStore, type EngineStoreOptions } from '../engine/engine-store';
import { migrate } from './migrations';
import { SqliteStorage } from './sqlite-storage';
import { WalCheckpointer } from './wal-checkpointer';

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions extends EngineStoreOptions {
  /** Database file (created if missing). `:memory:` gives a private in-memory database. */
  path: string;
  /** How long a write waits for another process's write lock, in ms (SQLite `busy_timeout`). Default 5000. */
  busyTimeoutMs?: number;
  /**
   * SQLite `synchronous` level. Default `NORMAL`: with WAL, a committed write survives a crash of the process (not of
   * the machine). `FULL` also survives power loss, at some write speed.
   */
  synchronous?: 'NORMAL' | 'FULL';
  /**
   * How often `waitForRollouts` re-reads the file, in ms, to see rollouts finished by other processes. Changes made
   * through this instance wake waiters at once. Default 500.
   */
  waitPollIntervalMs?: number;
  /**
   * Move WAL checkpoints to a worker thread once the store is busy (see {@link WalCheckpointer}). Default true for
   * files; `false` keeps SQLite's automatic checkpoint inside the committing call.
   */
  backgroundCheckpoints?: boolean;
}

/**
 * A {@link LightningStore} in one SQLite file (better-sqlite3, WAL). Several processes may open the same file: writes
 * take the lock in turn (`BEGIN IMMEDIATE` + busy timeout), so a rollout is dequeued exactly once across them.
 * Everything acknowledged is on disk when the call returns.
 *
 * @example
 * const store = new SqliteStore({ path: './agl.sqlite' });
 * await store.enqueueRollout({ input: { question: '1+1' } });
 * await store.close();
 */
export class SqliteStore extends EngineStore {
  /** The database file. */
  readonly path: string;
  readonly #db: Database.Database;
  readonly #checkpointer: WalCheckpointer | null;

  constructor(options: SqliteStoreOptions) {
    let db: Database.Database;
    try {
      db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 5000 });
    } catch (error) {
      throw new UserError(
        `Cannot open SQLite store at ${options.path}: ${(error as Error).message}. Check that the directory exists and is writable.`,
        { cause: error },
      );
    }
    try {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
      if (options.path !== ':memory:') db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
      migrate(db, options.path);
    } catch (error) {
      db.close();
      throw error;
    }
    super({
      storage: new SqliteStorage(db),
      clock: options.clock ?? systemClock,
      scanDebounceSeconds: options.scanDebounceSeconds ?? 10,
      capabilities: {
        threadSafe: true,
        asyncSafe: true,
        zeroCopy: true,
        otlpTraces: false,
        ...(options.path !== ':memory:' ? { sqliteFile: options.path } : {}),
      },
      waitPollMs: options.path === ':memory:' ? null : (options.waitPollIntervalMs ?? 500),
      label: `SqliteStore(${options.path})`,
    });
    this.path = options.path;
    this.#db = db;
    this.#checkpointer =
      options.path !== ':memory:' && options.backgroundCheckpoints !== false
        ? new WalCheckpointer(db, options.path)
        : null;
  }

  /** Whether WAL checkpoints run on the background thread now (it starts once the WAL first outgrows 2 MiB). */
  get backgroundCheckpointing(): boolean {
    return this.#checkpointer?.active ?? false;
  }

  override async close(): Promise<void> {
    await this.#checkpointer?.stop();
    await super.close();
  }

  /** The SQLite journal mode in use (`wal` for files). */
  get journalMode(): string {
    return String(this.#db.pragma('journal_mode', { simple: true }));
  }
}
