import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  buildTrainingSamples,
  type AdvantageConfig,
  type AggregationLevel,
  type RewardOptions,
  type RolloutLevelStats,
  type SampleBuildStats,
} from '@agl/core/algorithms';
import type { LightningStore } from '@agl/core/store';
import { loadTrajectories, type TrajectoryFilter } from './load-trajectories';
import { writeVerlFiles, type VerlFiles, type VerlFormat } from './write-verl-files';
import {
  redactionSummary,
  trainingDataRedaction,
  type RedactionSummary,
  type RedactOption,
} from './training-data-redaction';

/** Options of {@link exportVerl}. */
export interface ExportVerlOptions {
  store: LightningStore;
  /** Output folder. */
  outDir: string;
  filter?: TrajectoryFilter;
  /** Default `trajectory`. */
  level?: AggregationLevel;
  reward?: RewardOptions;
  advantage?: AdvantageConfig;
  maxPromptLength?: number;
  maxResponseLength?: number;
  /** Default both. */
  formats?: VerlFormat[];
  /** Base file name. Default `verl`. */
  name?: string;
  /** Mask secrets (default on; `false` = `--no-redact`): calls whose text held one lose their token ids. */
  redact?: RedactOption;
}

/** What {@link exportVerl} did. */
export interface ExportVerlResult {
  files: VerlFiles;
  /** `<outDir>/<name>.info.json`: the options, filters and counters of this export. */
  infoPath: string;
  nRollouts: number;
  stats: SampleBuildStats;
  /** What redaction masked (calls holding a secret are written without token ids, so verl skips them). */
  redaction: RedactionSummary;
  rolloutLevel?: RolloutLevelStats;
}

/**
 * `agl export verl`: store → trajectories → scored samples → `<outDir>/<name>.jsonl` and `.parquet` (verl rollout
 * batch columns, `data_id` = task id) plus `<name>.info.json` describing the export.
 */
export async function exportVerl(options: ExportVerlOptions): Promise<ExportVerlResult> {
  const { store, outDir, name = 'verl' } = options;
  const redaction = trainingDataRedaction(options.redact);
  const loaded = await loadTrajectories({ store, ...(options.filter ? { filter: options.filter } : {}), redaction });
  const batch = buildTrainingSamples({
    trajectories: loaded.trajectories,
    ...(options.level ? { level: options.level } : {}),
    ...(options.reward ? { reward: options.reward } : {}),
    ...(options.advantage ? { advantage: options.advantage } : {}),
    ...(options.maxPromptLength !== undefined ? { maxPromptLength: options.maxPromptLength } : {}),
    ...(options.maxResponseLength !== undefined ? { maxResponseLength: options.maxResponseLength } : {}),
  });
  const files = await writeVerlFiles({
    samples: batch.samples,
    outDir,
    name,
    ...(options.formats ? { formats: options.formats } : {}),
  });
  const infoPath = join(outDir, `${name}.info.json`);
  const info = {
    format: 'agl-verl-export/1',
    files,
    filter: {
      ...options.filter,
      agentMatch: options.filter?.agentMatch?.toString() ?? null,
      resourcesIdIn: loaded.resourcesIdIn,
    },
    level: options.level ?? 'trajectory',
    reward: options.reward ?? {},
    advantage: options.advantage ?? {},
    nRollouts: loaded.nRollouts,
    stats: batch.stats,
    rolloutLevel: batch.rolloutLevel ?? null,
    redaction: redactionSummary(redaction),
  };
  await writeFile(infoPath, `${JSON.stringify(info, null, 2)}\n`, 'utf8');
  return {
    files,
    infoPath,
    nRollouts: loaded.nRollouts,
    stats: batch.stats,
    ...(batch.rolloutLevel ? { rolloutLevel: batch.rolloutLevel } : {}),
    redaction: info.redaction,
  };
}
