import type { LightningStore } from '@agl/core/store';
import { toDpoPairs, type DpoStats } from './dpo-pairs';
import { writeJsonl } from './jsonl';
import { loadTrajectories, type LoadedTrajectories, type TrajectoryFilter } from './load-trajectories';
import { toSftRecords, type SftStats } from './sft-records';
import {
  redactionSummary,
  trainingDataRedaction,
  type RedactionSummary,
  type RedactOption,
} from './training-data-redaction';

/** Options every JSONL fine-tuning export takes. */
interface JsonlExportOptions {
  store: LightningStore;
  /** Output `.jsonl` file. */
  out: string;
  /** Which rollouts to read; each export documents its default statuses. */
  filter?: TrajectoryFilter;
  /** Mask secrets (default on; `false` = `--no-redact`). */
  redact?: RedactOption;
}

/** What a JSONL fine-tuning export returns. */
interface JsonlExportResult<S> {
  out: string;
  nRollouts: number;
  stats: S;
  /** What redaction masked. */
  redaction: RedactionSummary;
}

/** Options of {@link exportSft}; the filter's default statuses: `['succeeded']`. */
export interface ExportSftOptions extends JsonlExportOptions {
  minReward?: number;
  bestPerTask?: boolean;
}

/** Options of {@link exportDpo}; the filter's default statuses: `['succeeded', 'failed']`. */
export interface ExportDpoOptions extends JsonlExportOptions {
  minRewardGap?: number;
}

/** Loads the trajectories `filter` selects, turns them into records and writes them to `options.out` as JSONL. */
async function exportJsonl<S>(
  options: JsonlExportOptions,
  filter: TrajectoryFilter | undefined,
  toRecords: (loaded: LoadedTrajectories) => { records: readonly unknown[]; stats: S },
): Promise<JsonlExportResult<S>> {
  const redaction = trainingDataRedaction(options.redact);
  const loaded = await loadTrajectories({ store: options.store, ...(filter ? { filter } : {}), redaction });
  const { records, stats } = toRecords(loaded);
  // Task inputs and tool definitions reach the lines too: a last pass over each line.
  await writeJsonl({ path: options.out, records: redaction ? records.map((r) => redaction.json(r)) : records });
  return { out: options.out, nRollouts: loaded.nRollouts, stats, redaction: redactionSummary(redaction) };
}

/**
 * `agl export sft`: store → trajectories → OpenAI chat fine-tuning JSONL (`{messages, tools?}` per line), one record
 * per conversation, optionally only rewarded or best-per-task trajectories.
 */
export async function exportSft(options: ExportSftOptions): Promise<JsonlExportResult<SftStats>> {
  return exportJsonl(options, { statusIn: ['succeeded'], ...options.filter }, (loaded) =>
    toSftRecords({
      trajectories: loaded.trajectories,
      toolsOf: loaded.toolsOf,
      ...(options.minReward !== undefined ? { minReward: options.minReward } : {}),
      ...(options.bestPerTask !== undefined ? { bestPerTask: options.bestPerTask } : {}),
    }),
  );
}

/**
 * `agl export dpo`: store → trajectories → OpenAI preference fine-tuning JSONL
 * (`{input, preferred_output, non_preferred_output}`), one pair per task from its best and worst trajectories.
 */
export async function exportDpo(options: ExportDpoOptions): Promise<JsonlExportResult<DpoStats>> {
  return exportJsonl(options, options.filter, (loaded) =>
    toDpoPairs({
      trajectories: loaded.trajectories,
      toolsOf: loaded.toolsOf,
      ...(options.minRewardGap !== undefined ? { minRewardGap: options.minRewardGap } : {}),
    }),
  );
}
