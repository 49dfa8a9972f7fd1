import type { LightningStore, RolloutStatus } from '@agl/core';
import { findFinalReward } from '@agl/core/transitions';

/** A point-in-time view of a run, for progress displays. */
export interface ProgressSnapshot {
  queuing: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Rollouts enqueued so far. */
  total: number;
  /** Mean final reward over finished rollouts that have one; null when none has. */
  meanReward: number | null;
  /** Finished rollouts per second since the start. */
  rate: number;
  elapsedSeconds: number;
}

const TERMINAL: RolloutStatus[] = ['succeeded', 'failed', 'cancelled'];

/**
 * The final reward of a rollout's latest attempt, or null: the latest feedback, else the agent's latest reward, else the
 * latest judge score (`findFinalReward`).
 */
export async function finalRewardOf(store: LightningStore, rolloutId: string): Promise<number | null> {
  const spans = await store.querySpans({ rolloutId, attemptId: 'latest', sortBy: 'sequenceId', sortOrder: 'asc' });
  return findFinalReward(spans.items);
}

/** Rollout ids per `queryRollouts` call when a snapshot counts one run's rollouts (well under SQLite's 32,766 variables). */
const IDS_PER_QUERY = 500;

/** Counts by status of the rollouts `ids`, and the terminal ones among them. */
async function countRunRollouts(
  store: LightningStore,
  ids: ReadonlySet<string>,
): Promise<{ counts: Map<RolloutStatus, number>; terminal: string[] }> {
  const counts = new Map<RolloutStatus, number>();
  const terminal: string[] = [];
  const all = [...ids];
  for (let i = 0; i < all.length; i += IDS_PER_QUERY) {
    const page = await store.queryRollouts({ rolloutIdIn: all.slice(i, i + IDS_PER_QUERY), limit: -1 });
    for (const r of page.items) {
      counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      if (TERMINAL.includes(r.status)) terminal.push(r.rolloutId);
    }
  }
  return { counts, terminal };
}

/**
 * Compute a {@link ProgressSnapshot}; `rewards` caches final rewards of terminal rollouts between calls. With
 * `rolloutIds` (the rollouts one run made, see `trackRunRollouts`) only those count; without, every rollout in the store.
 */
export async function progressSnapshot(
  store: LightningStore,
  rewards: Map<string, number | null>,
  startedAt: number,
  rolloutIds?: ReadonlySet<string>,
): Promise<ProgressSnapshot> {
  let queuing: number, running: number, succeeded: number, failed: number, cancelled: number, total: number;
  if (rolloutIds !== undefined) {
    const { counts, terminal } = await countRunRollouts(store, rolloutIds);
    const n = (...statuses: RolloutStatus[]): number => statuses.reduce((sum, s) => sum + (counts.get(s) ?? 0), 0);
    [queuing, running, succeeded, failed, cancelled] = [
      n('queuing', 'requeuing'),
      n('preparing', 'running'),
      n('succeeded'),
      n('failed'),
      n('cancelled'),
    ];
    total = rolloutIds.size;
    for (const id of terminal) if (!rewards.has(id)) rewards.set(id, await finalRewardOf(store, id));
  } else {
    const count = async (statusIn: RolloutStatus[]): Promise<number> =>
      (await store.queryRollouts({ statusIn, limit: 0 })).total;
    [queuing, running, succeeded, failed, cancelled, total] = await Promise.all([
      count(['queuing', 'requeuing']),
      count(['preparing', 'running']),
      count(['succeeded']),
      count(['failed']),
      count(['cancelled']),
      store.queryRollouts({ limit: 0 }).then((p) => p.total),
    ]);
    if (rewards.size < succeeded + failed + cancelled) {
      const terminal = (await store.queryRollouts({ statusIn: TERMINAL })).items;
      for (const r of terminal) {
        if (!rewards.has(r.rolloutId)) rewards.set(r.rolloutId, await finalRewardOf(store, r.rolloutId));
      }
    }
  }
  const values = [...rewards.values()].filter((v): v is number => v !== null);
  const elapsedSeconds = (Date.now() - startedAt) / 1000;
  return {
    queuing,
    running,
    succeeded,
    failed,
    cancelled,
    total,
    meanReward: values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : null,
    rate: elapsedSeconds > 0 ? (succeeded + failed + cancelled) / elapsedSeconds : 0,
    elapsedSeconds,
  };
}

/** Poll the store and report snapshots until `stop()`, which reports (and returns) a final one. */
export function watchProgress(options: {
  store: LightningStore;
  intervalSeconds: number;
  onProgress?: (s: ProgressSnapshot) => void;
  startedAt: number;
  /** Count only these rollouts (one run's, still growing while it runs); default every rollout in the store. */
  rolloutIds?: ReadonlySet<string>;
}): {
  stop(): Promise<ProgressSnapshot | null>;
  last(): ProgressSnapshot | null;
} {
  const rewards = new Map<string, number | null>();
  let last: ProgressSnapshot | null = null;
  let busy: Promise<void> = Promise.resolve();
  const tick = (): Promise<void> =>
    (busy = busy.then(async () => {
      try {
        last = await progressSnapshot(options.store, rewards, options.startedAt, options.rolloutIds);
        options.onProgress?.(last);
      } catch {
        // A progress poll must never break the run (e.g. the store closed meanwhile).
      }
    }));
  const timer = options.onProgress ? setInterval(() => void tick(), options.intervalSeconds * 1000) : undefined;
  timer?.unref();
  return {
    async stop() {
      if (timer) clearInterval(timer);
      await tick();
      return last;
    },
    last: () => last,
  };
}
