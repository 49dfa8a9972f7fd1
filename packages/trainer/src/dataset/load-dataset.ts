import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { UserError } from '@agl/core/errors';

/** A dataset: an array, any (async) iterable of tasks, or a path to a `.json` (array) or `.jsonl` file. */
export type DatasetSource<T = unknown> = readonly T[] | Iterable<T> | AsyncIterable<T> | string;

/** Materialise a {@link DatasetSource} into an array of tasks. */
export async function loadDataset<T = unknown>(source: DatasetSource<T> | null | undefined): Promise<T[]> {
  if (source === null || source === undefined) return [];
  if (typeof source === 'string') return (await readDatasetFile(source)) as T[];
  if (Array.isArray(source)) return [...(source as readonly T[])];
  if (typeof (source as AsyncIterable<T>)[Symbol.asyncIterator] === 'function') {
    const out: T[] = [];
    for await (const item of source as AsyncIterable<T>) out.push(item);
    return out;
  }
  if (typeof (source as Iterable<T>)[Symbol.iterator] === 'function') return [...(source as Iterable<T>)];
  throw new UserError(
    `A dataset must be an array, an iterable, an async iterable, or a .json/.jsonl path; got ${typeof source}.`,
  );
}

async function readDatasetFile(path: string): Promise<unknown[]> {
  const full = resolve(path);
  let text: string;
  try {
    text = await readFile(full, 'utf8');
  } catch (err) {
    throw new UserError(
      `Cannot read dataset file ${full}: ${err instanceof Error ? err.message : String(err)}. Check the path.`,
      { cause: err },
    );
  }
  const ext = extname(full).toLowerCase();
  if (ext === '.jsonl' || ext === '.ndjson') {
    return text
      .split('\n')
      .map((line, i) => [line.trim(), i + 1] as const)
      .filter(([line]) => line !== '')
      .map(([line, lineNo]) => {
        try {
          return JSON.parse(line) as unknown;
        } catch (err) {
          throw new UserError(
            `Dataset ${full} line ${lineNo} is not valid JSON (${err instanceof Error ? err.message : String(err)}); each line must be one JSON task.`,
          );
        }
      });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UserError(
      `Dataset ${full} is not valid JSON (${err instanceof Error ? err.message : String(err)}); use a JSON array or a .jsonl file.`,
    );
  }
  if (!Array.isArray(parsed))
    throw new UserError(
      `Dataset ${full} must hold a JSON array of tasks; got ${typeof parsed}. Wrap the tasks in [...] or use .jsonl.`,
    );
  return parsed;
}
