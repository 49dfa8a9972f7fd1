import type { Rollout } from '@agl/core/schema';
import type { Clock } from '@agl/core/store';
import { ScanTimer } from '../engine/scan-timer';
import { runRuleAsync, type Rule } from '../engine/storage-ops';
import { scanRule, type Plan, type RuleContext } from '../engine/store-rules';
import type { AsyncStoreDatabase } from './async-storage';

/** Options of {@link AsyncRuleRunner}. */
export interface AsyncRuleRunnerOptions {
  db: AsyncStoreDatabase;
  clock: Clock;
  /** Watchdog debounce in seconds (default 10; 0 = scan on every watchdog method). */
  scanDebounceSeconds?: number;
  /** Called after a committed transaction with every rollout whose status changed in it. */
  onRolloutsChanged?: (rollouts: readonly Rollout[]) => void;
}

/**
 * Runs the store rules (`engine/store-rules.ts`, `engine/queries.ts`) on an {@link AsyncStoreDatabase} (PostgreSQL):
 * each write plan in one transaction, which the database may re-run after a serialization failure (the plan then
 * starts over with a fresh context). What changed is published inside the transaction (NOTIFY, delivered on commit)
 * and told to this process's waiters after it.
 */
export class AsyncRuleRunner {
  readonly #db: AsyncStoreDatabase;
  readonly #clock: Clock;
  readonly #timer: ScanTimer;
  readonly #onChanged: ((rollouts: readonly Rollout[]) => void) | undefined;
  #scanning: Promise<void> | null = null;

  constructor(options: AsyncRuleRunnerOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#timer = new ScanTimer(options.scanDebounceSeconds ?? 10);
    this.#onChanged = options.onRolloutsChanged;
  }

  get db(): AsyncStoreDatabase {
    return this.#db;
  }

  /** How many watchdog scans ran. */
  get scans(): number {
    return this.#timer.scans;
  }

  /** Runs a read rule with a consistent view. */
  read<T>(rule: () => Rule<T>): Promise<T> {
    return this.#db.read((s) => runRuleAsync(s, rule()));
  }

  /** Runs a write plan as one transaction: a failed plan changes nothing. */
  async write<T>(plan: Plan<T>): Promise<T> {
    let committed: RuleContext | null = null;
    const result = await this.#db.transaction(async (s) => {
      const t: RuleContext = { now: this.#clock.now(), changed: [], enqueued: 0 };
      const value = await runRuleAsync(s, plan(t));
      if ((t.changed.length > 0 || t.enqueued > 0) && s.publishChanges) await s.publishChanges(t.changed, t.enqueued);
      committed = t;
      return value;
    });
    const changed = (committed as RuleContext | null)?.changed ?? [];
    if (changed.length > 0) this.#onChanged?.(changed);
    return result;
  }

  /** Runs the watchdog unless it ran less than `scanDebounceSeconds` ago (a scan in progress is awaited). */
  async maybeScan(): Promise<boolean> {
    if (this.#scanning) {
      await this.#scanning;
      return false;
    }
    if (!this.#timer.due(this.#clock.now())) return false;
    this.#timer.scans += 1;
    this.#scanning = this.write(scanRule).finally(() => {
      this.#scanning = null;
    });
    await this.#scanning;
    return true;
  }
}
