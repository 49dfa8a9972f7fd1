import type { Attempt, ResourcesUpdate, Rollout, Span, Worker } from '@agl/core/schema';

/** Format name and version in the first line of a dump. */
export const DUMP_FORMAT = 'agl-store-dump';
export const DUMP_VERSION = 1;

/** What a dump holds, counted in its last line (an import checks it, so a truncated file is refused). */
export interface DumpCounts {
  rollouts: number;
  attempts: number;
  spans: number;
  resources: number;
  workers: number;
  sequences: number;
  queued: number;
}

/**
 * One line of a portable store dump (JSON Lines, camelCase documents exactly as the store returns them). Order:
 * header, resources, latest resources id, workers, then each rollout followed by its attempts and spans (insertion
 * order), span sequence counters, the queue (oldest first), and a closing `end` line with the counts.
 */
export type DumpLine =
  | { kind: 'header'; format: typeof DUMP_FORMAT; version: number; source: string; exportedAt: string }
  | { kind: 'resources'; value: ResourcesUpdate }
  | { kind: 'latestResources'; value: string | null }
  | { kind: 'worker'; value: Worker }
  | { kind: 'rollout'; value: Rollout }
  | { kind: 'attempt'; value: Attempt }
  | { kind: 'span'; value: Span }
  | { kind: 'sequence'; value: [rolloutId: string, value: number] }
  | { kind: 'queue'; value: string[] }
  | { kind: 'end'; counts: DumpCounts };
