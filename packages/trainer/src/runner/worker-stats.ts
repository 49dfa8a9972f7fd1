import type { RunnerStats } from './worker-loop';

/** A worker process's or thread's progress since its last report: attempts started and finished. */
export type StatsMessage = { type: 'stats' } & RunnerStats;

/** Adds a {@link StatsMessage} to `stats`; returns whether `maxRollouts` attempts have now finished. */
export function addReportedStats(stats: RunnerStats, msg: StatsMessage, maxRollouts: number | undefined): boolean {
  stats.started += msg.started;
  stats.succeeded += msg.succeeded;
  stats.failed += msg.failed;
  return maxRollouts !== undefined && stats.succeeded + stats.failed >= maxRollouts;
}
