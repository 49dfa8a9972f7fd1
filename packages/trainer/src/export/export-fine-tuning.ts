import type { LightningStore } from '@agl/core/store';
import { toDpoPairs, type DpoStats } from './dpo-pairs';
import { writeJsonl } from './jsonl';
import { loadTrajectories, type TrajectoryFilter } from './load-trajectories';
import { toSftRecords, type SftStats } from './sft-records';

/** Options of {@link exportSft}. */
export interface ExportSftOptions {
  store: LightningStore;
  /** Output `.jsonl` file. */
  out: string;
  /** Default statuses: `['succeeded']`. */
  filter?: TrajectoryFilter;
  minReward?: number;
  bestPerTask?: boolean;
}

/**
 * `agl export sft`: store → trajectories → OpenAI chat fine-tuning JSONL (`{messages, tools?}` per line), one record
 * per conversation, optionally only rewarded or best-per-task trajectories.
 */
export async function exportSft(
  options: ExportSftOptions,
): Promise<{ out: string; nRollouts: number; stats: SftStats }> {
  const loaded = await loadTrajectories({
    store: options.store,
    filter: { statusIn: ['succeeded'], ...options.filter },
  });
  const { records, stats } = toSftRecords({
    trajectories: loaded.trajectories,
    toolsOf: loaded.toolsOf,
    ...(options.minReward !== undefined ? { minReward: options.minReward } : {}),
    ...(options.bestPerTask !== undefined ? { bestPerTask: options.bestPerTask } : {}),
  });
  await writeJsonl({ path: options.out, records });
  return { out: options.out, nRollouts: loaded.nRollouts, stats };
}

/** Options of {@link exportDpo}. */
export interface ExportDpoOptions {
  store: LightningStore;
  /** Output `.jsonl` file. */
  out: string;
  /** Default statuses: `['succeeded', 'failed']`. */
  filter?: TrajectoryFilter;
  minRewardGap?: number;
}

/**
 * `agl export dpo`: store → trajectories → OpenAI preference fine-tuning JSONL
 * (`{input, preferred_output, non_preferred_output}`), one pair per task from its best and worst trajectories.
 */
export async function exportDpo(
  options: ExportDpoOptions,
): Promise<{ out: string; nRollouts: number; stats: DpoStats }> {
  const loaded = await loadTrajectories({
    store: options.store,
    ...(options.filter ? { filter: options.filter } : {}),
  });
  const { records, stats } = toDpoPairs({
    trajectories: loaded.trajectories,
    toolsOf: loaded.toolsOf,
    ...(options.minRewardGap !== undefined ? { minRewardGap: options.minRewardGap } : {}),
  });
  await writeJsonl({ path: options.out, records });
  return { out: options.out, nRollouts: loaded.nRollouts, stats };
}
