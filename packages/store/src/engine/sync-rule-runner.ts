import type { Rollout } from '@agl/core/schema';
import type { Clock } from '@agl/core/store';
import { ScanTimer } from './scan-timer';
import { type StoreStorage, WRITE_LOCK_BUSY } from './storage';
import { runRule, type Rule } from './storage-ops';
import { scanRule, type Plan, type RuleContext } from './store-rules';

/** The outcome of one job of {@link SyncRuleRunner.runBatch}. */
export type BatchResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Options of {@link SyncRuleRunner}. */
export interface SyncRuleRunnerOptions {
  storage: StoreStorage;
  clock: Clock;
  /** Watchdog debounce in seconds (default 10; 0 = scan on every watchdog method). */
  scanDebounceSeconds?: number;
  /** Called after a committed transaction with every rollout whose status changed in it. */
  onRolloutsChanged?: (rollouts: readonly Rollout[]) => void;
  /** Called after a committed transaction that put rollout ids on the queue. */
  onQueued?: () => void;
}

/**
 * Runs the store rules (`store-rules.ts`, `queries.ts`) on a synchronous {@link StoreStorage} (memory maps, SQLite):
 * each write plan in one storage transaction, optionally many in one commit ({@link SyncRuleRunner.runBatch}), and
 * tells waiters what changed once it committed. The `LightningStore` of these backends is `EngineStore`.
 */
export class SyncRuleRunner {
  readonly #s: StoreStorage;
  readonly #clock: Clock;
  readonly #timer: ScanTimer;
  readonly #onChanged: ((rollouts: readonly Rollout[]) => void) | undefined;
  readonly #onQueued: (() => void) | undefined;

  constructor(options: SyncRuleRunnerOptions) {
    this.#s = options.storage;
    this.#clock = options.clock;
    this.#timer = new ScanTimer(options.scanDebounceSeconds ?? 10);
    this.#onChanged = options.onRolloutsChanged;
    this.#onQueued = options.onQueued;
  }

  get storage(): StoreStorage {
    return this.#s;
  }

  /** How many watchdog scans ran (for the debounce tests). */
  get scans(): number {
    return this.#timer.scans;
  }

  /** Whether {@link SyncRuleRunner.runBatch} can isolate jobs (the storage has savepoints). */
  get batches(): boolean {
    return this.#s.savepoint !== undefined;
  }

  #context(): RuleContext {
    return { now: this.#clock.now(), changed: [], enqueued: 0 };
  }

  #notify(contexts: readonly RuleContext[]): void {
    const changed = contexts.flatMap((t) => t.changed);
    if (changed.length > 0) this.#onChanged?.(changed);
    if (contexts.some((t) => t.enqueued > 0)) this.#onQueued?.();
  }

  /** Runs a read rule with a consistent view. */
  read<T>(rule: Rule<T>): T {
    return this.#s.read(() => runRule(this.#s, rule));
  }

  /** Runs a write plan as one atomic transaction: a failed plan changes nothing. */
  write<T>(plan: Plan<T>): T {
    const t = this.#context();
    const result = this.#s.transaction(() => runRule(this.#s, plan(t)));
    this.#notify([t]);
    return result;
  }

  /**
   * {@link SyncRuleRunner.write}, except that when another connection holds the write lock (a storage with
   * `tryTransaction`) it returns {@link WRITE_LOCK_BUSY} at once without running the plan.
   */
  tryWrite<T>(plan: Plan<T>): T | typeof WRITE_LOCK_BUSY {
    if (!this.#s.tryTransaction) return this.write(plan);
    const t = this.#context();
    const result = this.#s.tryTransaction(() => runRule(this.#s, plan(t)));
    if (result !== WRITE_LOCK_BUSY) this.#notify([t]);
    return result;
  }

  /**
   * Runs several write plans in one storage transaction (one commit instead of one each), each under its own
   * savepoint, so a plan that throws undoes only its own changes and the others still land. Results come back in job
   * order once the transaction has committed; if the commit itself fails, every job gets that error. Waiters are told
   * after the commit. With `tryLock` (and a storage that has `tryTransaction`), returns `null` without running any job
   * when another connection holds the write lock.
   */
  runBatch(jobs: ReadonlyArray<Plan<unknown>>, options: { tryLock?: boolean } = {}): BatchResult[] | null {
    const savepoint = this.#s.savepoint?.bind(this.#s);
    if (!savepoint) throw new Error('runBatch needs a storage with savepoints');
    const committed: RuleContext[] = [];
    const transaction =
      options.tryLock && this.#s.tryTransaction
        ? this.#s.tryTransaction.bind(this.#s)
        : this.#s.transaction.bind(this.#s);
    let results: BatchResult[] | typeof WRITE_LOCK_BUSY;
    try {
      results = transaction(() => {
        committed.length = 0;
        return jobs.map((job): BatchResult => {
          const t = this.#context();
          try {
            const value = savepoint(() => runRule(this.#s, job(t)));
            committed.push(t);
            return { ok: true, value };
          } catch (error) {
            return { ok: false, error };
          }
        });
      });
    } catch (error) {
      return jobs.map(() => ({ ok: false, error }));
    }
    if (results === WRITE_LOCK_BUSY) return null;
    this.#notify(committed);
    return results;
  }

  /**
   * Runs the watchdog unless it ran less than `scanDebounceSeconds` ago. Returns whether it scanned. While another
   * connection holds the write lock the scan is left to a later call (it is a health check, and that connection's
   * own store scans too) rather than blocking the caller.
   */
  maybeScan(): boolean {
    if (!this.#timer.due(this.#clock.now())) return false;
    const t = this.#context();
    const scan = (): void => runRule(this.#s, scanRule(t));
    if (!this.#s.tryTransaction) this.#s.transaction(scan);
    else if (this.#s.tryTransaction(scan) === WRITE_LOCK_BUSY) {
      this.#timer.skipped();
      return false;
    }
    this.#timer.scans += 1;
    this.#notify([t]);
    return true;
  }
}
