import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TrainingSample } from '@agl/core/algorithms';
import { UserError } from '@agl/core/errors';
import { writeJsonl } from './jsonl';
import { verlRowsToParquet } from './verl-parquet';
import { toVerlRows } from './verl-rows';

/** File formats of the verl export. */
export type VerlFormat = 'jsonl' | 'parquet';

/** Options of {@link writeVerlFiles}. */
export interface WriteVerlFilesOptions {
  samples: readonly TrainingSample[];
  /** Output folder (created if missing). */
  outDir: string;
  /** Base name of the files. Default `verl` (→ `verl.jsonl`, `verl.parquet`). */
  name?: string;
  /** Default both. */
  formats?: readonly VerlFormat[];
}

/** Paths written and the row count. */
export interface VerlFiles {
  rows: number;
  jsonl?: string;
  parquet?: string;
}

/**
 * Writes the samples as verl rows: `<outDir>/<name>.jsonl` and `<outDir>/<name>.parquet`, same rows, same order.
 *
 * @throws UserError when there are no samples (an empty export is almost always a filter mistake).
 */
export async function writeVerlFiles(options: WriteVerlFilesOptions): Promise<VerlFiles> {
  const { samples, outDir, name = 'verl', formats = ['jsonl', 'parquet'] } = options;
  if (samples.length === 0) {
    throw new UserError(
      `no training samples to write to ${outDir}: no trajectory had calls with prompt and response token ids; ` +
        'check the filters (mode, resources id, agent match) and that the gateway captured token ids',
    );
  }
  await mkdir(outDir, { recursive: true });
  const rows = toVerlRows(samples);
  const files: VerlFiles = { rows: rows.length };
  if (formats.includes('jsonl')) {
    files.jsonl = join(outDir, `${name}.jsonl`);
    await writeJsonl({ path: files.jsonl, records: rows });
  }
  if (formats.includes('parquet')) {
    files.parquet = join(outDir, `${name}.parquet`);
    await writeFile(files.parquet, new Uint8Array(verlRowsToParquet(rows)));
  }
  return files;
}
