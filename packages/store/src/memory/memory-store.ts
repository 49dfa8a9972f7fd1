import { UserError } from '@agl/core/errors';
import { systemClock, type StoreStatistics } from '@agl/core/store';
import type { Span } from '@agl/core/schema';
import { EngineStore, type EngineStoreOptions } from '../engine/engine-store';
import { MemoryStorage } from './memory-storage';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions extends EngineStoreOptions {
  /**
   * Optional span eviction (AGL 0.3's in-memory store): once the estimated span bytes pass `evictionThresholdBytes`,
   * whole rollouts' spans are dropped, oldest rollout first, until at most `safeThresholdBytes` remain; `querySpans` on
   * an evicted rollout then throws `NotFoundError`. Off by default (AGL turns it on at 70 % of system memory).
   */
  eviction?: {
    evictionThresholdBytes: number;
    safeThresholdBytes: number;
    spanSizeEstimator?: (span: Span) => number;
  };
}

/**
 * A {@link LightningStore} in process memory: fast, nothing persisted. Same semantics as `SqliteStore`.
 *
 * @example
 * const store = new MemoryStore();
 * const rollout = await store.enqueueRollout({ input: { question: '1+1' } });
 */
export class MemoryStore extends EngineStore {
  readonly #storage: MemoryStorage;
  readonly #eviction: MemoryStoreOptions['eviction'];

  constructor(options: MemoryStoreOptions = {}) {
    const ev = options.eviction;
    if (ev && !(ev.safeThresholdBytes < ev.evictionThresholdBytes)) {
      throw new UserError(
        `MemoryStore eviction: safeThresholdBytes (${ev.safeThresholdBytes}) must be below evictionThresholdBytes (${ev.evictionThresholdBytes}).`,
      );
    }
    const storage = new MemoryStorage(ev);
    super({
      storage,
      clock: options.clock ?? systemClock,
      scanDebounceSeconds: options.scanDebounceSeconds ?? 10,
      capabilities: { threadSafe: false, asyncSafe: true, zeroCopy: false, otlpTraces: false },
      waitPollMs: null,
      label: 'MemoryStore',
    });
    this.#storage = storage;
    this.#eviction = ev;
  }

  override async statistics(): Promise<StoreStatistics> {
    const stats = await super.statistics();
    stats.totalSpanBytes = this.#storage.totalSpanBytes;
    if (this.#eviction) {
      stats.evictionThresholdBytes = this.#eviction.evictionThresholdBytes;
      stats.safeThresholdBytes = this.#eviction.safeThresholdBytes;
    }
    return stats;
  }
}
