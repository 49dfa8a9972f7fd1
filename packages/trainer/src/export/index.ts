/**
 * `@agl/trainer/export`: training data out of a store. verl rows (JSONL + Parquet), OpenAI SFT and DPO JSONL.
 */
export { exportVerl, type ExportVerlOptions, type ExportVerlResult } from './export-verl';
export { exportSft, exportDpo, type ExportSftOptions, type ExportDpoOptions } from './export-fine-tuning';
export { loadTrajectories, type TrajectoryFilter, type LoadedTrajectories } from './load-trajectories';
export { writeVerlFiles, type WriteVerlFilesOptions, type VerlFiles, type VerlFormat } from './write-verl-files';
export { toVerlRows, VERL_COLUMNS, type VerlRow } from './verl-rows';
export { verlRowsToParquet } from './verl-parquet';
export { toSftRecords, type SftRecord, type SftRecordsOptions, type SftStats } from './sft-records';
export { toDpoPairs, type DpoRecord, type DpoPairsOptions, type DpoStats } from './dpo-pairs';
export { toOpenAiMessage, type OpenAiMessage, type OpenAiTool } from './openai-messages';
export { writeJsonl, readJsonl } from './jsonl';
export {
  TrainingDataRedaction,
  trainingDataRedaction,
  redactionSummary,
  describeRedactionSummary,
  redactFineTuningRecords,
  type RedactOption,
  type RedactionSummary,
} from './training-data-redaction';
