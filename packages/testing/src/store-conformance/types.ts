import type { LightningStore } from '@agl/core/store';
import type { FakeClock } from '../fake-clock';

/** What the conformance suite hands to a store factory. */
export interface StoreFactoryContext {
  /** The clock the store MUST use for every timestamp and for its watchdog. */
  clock: FakeClock;
  /**
   * Watchdog debounce the store should use, in seconds (`0` = scan on every watchdog method). The suite asks for 0
   * except in the debounce tests.
   */
  scanDebounceSeconds: number;
}

/** A store under test and how to dispose of it. */
export interface StoreUnderTest {
  store: LightningStore;
  /** Closes servers, deletes temp files. Called after each test; the suite closes `store` itself before. */
  cleanup?: () => Promise<void> | void;
}

/** Creates a fresh, empty store for one test. */
export type StoreFactory = (context: StoreFactoryContext) => Promise<StoreUnderTest> | StoreUnderTest;

/** Switches for backends that cannot do everything an embedded store can. */
export interface StoreConformanceOptions {
  /**
   * Whether the factory honours `scanDebounceSeconds` (default true). An HTTP client whose server was started with its
   * own debounce can set false; the debounce cases are then left out.
   */
  configurableDebounce?: boolean;
  /**
   * Whether the store has the optional `querySpansOfAttempts` (default true: the memory, SQLite and PostgreSQL stores
   * do). A store without it (the HTTP client) sets false; its case is then skipped.
   */
  querySpansOfAttempts?: boolean;
  /** Parallel dequeuers in the concurrency case (default 100). */
  parallelDequeuers?: number;
}
