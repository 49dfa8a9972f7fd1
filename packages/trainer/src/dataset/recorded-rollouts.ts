import type { Rollout, RolloutStatus, Span } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** Which stored rollouts {@link recordedRollouts} reads. */
export interface RecordedRolloutsOptions {
  /** Rollout statuses (default: every status). */
  statuses?: readonly RolloutStatus[];
  /** Started at or after (epoch seconds). */
  since?: number;
  /** Started before (epoch seconds). */
  until?: number;
}

/** A store's rollouts, oldest first, filtered by status and start time (the reading of dataset build and the judge). */
export async function recordedRollouts(
  store: LightningStore,
  options: RecordedRolloutsOptions = {},
): Promise<Rollout[]> {
  const page = await store.queryRollouts({
    statusIn: options.statuses ? [...options.statuses] : undefined,
    sortBy: 'startTime',
    sortOrder: 'asc',
  });
  return (page.items as Rollout[]).filter(
    (r) =>
      (options.since === undefined || r.startTime >= options.since) &&
      (options.until === undefined || r.startTime < options.until),
  );
}

/** The spans of a rollout's latest attempt, in sequence order. */
export async function latestSpans(store: LightningStore, rolloutId: string): Promise<Span[]> {
  return (await store.querySpans({ rolloutId, attemptId: 'latest', sortBy: 'sequenceId' })).items;
}
