import { findFinalReward, listFeedback, type FeedbackEntry } from '@agl/core/transitions';
import { isAttemptedRollout, isTerminalStatus, type AttemptedRollout, type Rollout, type Span } from '@agl/core/schema';
import { SPAN_ANNOTATION } from '@agl/core/semconv';
import {
  systemClock,
  type Clock,
  type LightningStore,
  type PageOptions,
  type QueryRolloutsOptions,
} from '@agl/core/store';

/** A rollout joined with what the dashboard sorts and filters by. */
export interface RolloutSummary {
  rollout: Rollout | AttemptedRollout;
  /** Number of attempts. */
  attemptCount: number;
  /** Final reward of the latest attempt (feedback, else the agent's, else a judge's: `findFinalReward`), or `null`. */
  finalReward: number | null;
  /** Users' feedback on the latest attempt, oldest first (`listFeedback`). */
  feedback: FeedbackEntry[];
  /** `endTime - startTime` of the rollout in seconds; `null` while it runs. */
  durationSeconds: number | null;
  /** Worker of the latest attempt. */
  workerId: string | null;
}

const DEFAULT_MAX_ENTRIES = 100_000;
/** A finished rollout is cached only this long after its end, so late spans (batched exporters) still count. */
const DEFAULT_SETTLE_SECONDS = 30;
/**
 * A cached summary is recomputed after this long, so spans written past this server (another server on the same
 * database, `agl feedback --store file`) show within it. Spans written through this server show at once
 * ({@link RolloutSummaries.invalidate}).
 */
const DEFAULT_MAX_AGE_SECONDS = 60;

/** Rollouts per `querySpansOfAttempts` call: each store read stays short, so other requests get their turn. */
const SPANS_PER_READ = 1000;
/** `querySpans` calls at a time on a store without `querySpansOfAttempts` (`StoreClient`). */
const PARALLEL_SPAN_QUERIES = 16;

type CachedSummary = Omit<RolloutSummary, 'rollout'>;

/** A summary from the rollout and the reward spans of its latest attempt (null: it has none). */
function summaryOf(rollout: Rollout | AttemptedRollout, rewardSpans: Span[] | null): CachedSummary {
  const attempt = isAttemptedRollout(rollout) ? rollout.attempt : null;
  return {
    // Attempts are numbered 1..n by sequence id on every store (conformance pins it).
    attemptCount: attempt?.sequenceId ?? 0,
    finalReward: rewardSpans === null ? null : findFinalReward(rewardSpans),
    feedback: rewardSpans === null ? [] : listFeedback(rewardSpans),
    durationSeconds: rollout.endTime === null ? null : Math.max(0, rollout.endTime - rollout.startTime),
    workerId: attempt?.workerId ?? null,
  };
}

function cacheKey(rollout: Rollout | AttemptedRollout, now: number, settleSeconds: number): string | null {
  // Only settled finished rollouts are cached: their attempts and reward no longer change.
  if (!isTerminalStatus(rollout.status)) return null;
  if (rollout.endTime !== null && now - rollout.endTime < settleSeconds) return null;
  const attempt = isAttemptedRollout(rollout) ? rollout.attempt : null;
  return `${rollout.status}|${rollout.endTime ?? ''}|${attempt?.attemptId ?? ''}|${attempt?.sequenceId ?? 0}`;
}

/**
 * Joins rollouts with their attempt count, final reward and duration over the {@link LightningStore} interface, so it
 * works for every backend. The reward reads only the `agentlightning.annotation` spans of the latest attempt (never all
 * spans). Summaries of finished rollouts are cached (bounded), so repeated dashboard polls cost one rollout query; a
 * span written for a rollout ({@link RolloutSummaries.invalidate}, called by the server on every span write) drops its
 * entry, so late feedback shows at once.
 */
export class RolloutSummaries {
  readonly #store: LightningStore;
  readonly #maxEntries: number;
  readonly #clock: Clock;
  readonly #settleSeconds: number;
  readonly #maxAgeSeconds: number;
  readonly #cache = new Map<string, { key: string; at: number; summary: CachedSummary }>();
  /** Write counter, and the counter's value at the latest span write of each recently written rollout. */
  #writes = 0;
  readonly #writtenAt = new Map<string, number>();

  constructor(options: {
    store: LightningStore;
    maxEntries?: number;
    clock?: Clock;
    settleSeconds?: number;
    maxAgeSeconds?: number;
  }) {
    this.#store = options.store;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.#clock = options.clock ?? systemClock;
    this.#settleSeconds = options.settleSeconds ?? DEFAULT_SETTLE_SECONDS;
    this.#maxAgeSeconds = options.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  }

  /** Spans were written for `rolloutId`: its next summary is computed afresh (also one being computed now). */
  invalidate(rolloutId: string): void {
    this.#writes += 1;
    this.#cache.delete(rolloutId);
    this.#writtenAt.delete(rolloutId);
    this.#writtenAt.set(rolloutId, this.#writes);
    if (this.#writtenAt.size > this.#maxEntries) {
      const oldest = this.#writtenAt.keys().next();
      if (!oldest.done) this.#writtenAt.delete(oldest.value);
    }
  }

  /** The summary of one rollout (cached when it is finished). */
  async summarize(rollout: Rollout | AttemptedRollout): Promise<RolloutSummary> {
    const [summary] = await this.summarizeAll([rollout]);
    return summary!;
  }

  /**
   * Summaries of many rollouts. The attempt count is the latest attempt's sequence id (a store numbers attempts 1..n);
   * the reward spans of the rollouts not cached come in one store call per {@link SPANS_PER_READ} rollouts when the
   * store has `querySpansOfAttempts`, else with one `querySpans` per rollout, a few at a time.
   */
  async summarizeAll(rollouts: readonly (Rollout | AttemptedRollout)[]): Promise<RolloutSummary[]> {
    const now = this.#clock.now();
    const out: RolloutSummary[] = new Array<RolloutSummary>(rollouts.length);
    const misses: Array<{ rollout: Rollout | AttemptedRollout; index: number; key: string | null }> = [];
    rollouts.forEach((rollout, index) => {
      const key = cacheKey(rollout, now, this.#settleSeconds);
      const cached = this.#cache.get(rollout.rolloutId);
      if (key !== null && cached?.key === key && now - cached.at < this.#maxAgeSeconds)
        out[index] = { rollout, ...cached.summary };
      else misses.push({ rollout, index, key });
    });
    const batch = this.#store.querySpansOfAttempts ? SPANS_PER_READ : PARALLEL_SPAN_QUERIES;
    for (let i = 0; i < misses.length; i += batch) {
      const chunk = misses.slice(i, i + batch);
      const writesBefore = this.#writes;
      const rewardSpans = await this.#rewardSpans(chunk.map((m) => m.rollout));
      chunk.forEach(({ rollout, index, key }, j) => {
        const summary = summaryOf(rollout, rewardSpans[j]!);
        this.#remember(rollout.rolloutId, key, now, writesBefore, summary);
        out[index] = { rollout, ...summary };
      });
    }
    return out;
  }

  /** The annotation spans of each rollout's latest attempt by sequence id (null: no attempt yet). */
  async #rewardSpans(rollouts: readonly (Rollout | AttemptedRollout)[]): Promise<Array<Span[] | null>> {
    const refs = rollouts.flatMap((r) =>
      isAttemptedRollout(r) ? [{ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId }] : [],
    );
    if (refs.length === 0) return rollouts.map(() => null);
    const store = this.#store;
    const lists = store.querySpansOfAttempts
      ? await store.querySpansOfAttempts(refs, { name: SPAN_ANNOTATION })
      : await Promise.all(
          refs.map(
            async (ref) => (await store.querySpans({ ...ref, name: SPAN_ANNOTATION, sortBy: 'sequenceId' })).items,
          ),
        );
    let next = 0;
    return rollouts.map((r) => (isAttemptedRollout(r) ? lists[next++]! : null));
  }

  /** Caches a settled rollout's summary, unless a span written while it was computed may be missing from it. */
  #remember(rolloutId: string, key: string | null, now: number, writesBefore: number, summary: CachedSummary): void {
    if (key === null || (this.#writtenAt.get(rolloutId) ?? 0) > writesBefore) return;
    if (this.#cache.size >= this.#maxEntries) {
      const oldest = this.#cache.keys().next();
      if (!oldest.done) this.#cache.delete(oldest.value);
    }
    this.#cache.set(rolloutId, { key, at: now, summary });
  }

  /** Every rollout that matches `filters` and `keep` (no pagination, start order), summarised. */
  async all(
    filters: Omit<QueryRolloutsOptions, keyof PageOptions> = {},
    keep: (rollout: Rollout | AttemptedRollout) => boolean = () => true,
  ): Promise<RolloutSummary[]> {
    const page = await this.#store.queryRollouts({ ...filters, limit: -1, sortBy: 'startTime', sortOrder: 'asc' });
    return this.summarizeAll(page.items.filter(keep));
  }
}

/** Mean, extremes and success rate of a list of rewards. */
export interface RewardStats {
  count: number;
  mean: number | null;
  min: number | null;
  max: number | null;
  /** Share of rewards ≥ the success threshold; `null` when there are none. */
  successRate: number | null;
}

/** {@link RewardStats} of `rewards` (nulls are ignored). */
export function rewardStats(rewards: readonly (number | null)[], successThreshold: number): RewardStats {
  const values = rewards.filter((r): r is number => r !== null);
  if (values.length === 0) return { count: 0, mean: null, min: null, max: null, successRate: null };
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    mean: sum / values.length,
    min: Math.min(...values),
    max: Math.max(...values),
    successRate: values.filter((v) => v >= successThreshold).length / values.length,
  };
}
