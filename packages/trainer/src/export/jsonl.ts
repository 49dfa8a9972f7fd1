import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes one JSON document per line (UTF-8, `\n`-terminated), creating the parent folder. */
export async function writeJsonl(options: { path: string; records: readonly unknown[] }): Promise<void> {
  await mkdir(dirname(options.path), { recursive: true });
  const body = options.records.map((r) => JSON.stringify(r)).join('\n');
  await writeFile(options.path, options.records.length > 0 ? `${body}\n` : '', 'utf8');
}

/** Reads a JSONL file back (blank lines skipped). */
export async function readJsonl(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}
