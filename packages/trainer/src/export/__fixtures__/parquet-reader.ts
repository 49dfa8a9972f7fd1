// The second, independent Parquet reader of the tests: parquet-wasm (Rust arrow-rs compiled to wasm) decoding to
// Arrow IPC, read with apache-arrow. It shares no code with hyparquet-writer, which writes the files.
import { readFile } from 'node:fs/promises';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';

function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value === null || value === undefined) return null;
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number | bigint>, plain);
  if (typeof value === 'object' && 'toArray' in value && typeof value.toArray === 'function') {
    return Array.from(value.toArray() as ArrayLike<unknown>, plain);
  }
  return value;
}

/** Reads every row of a Parquet file as a plain object (int64 → number, lists → arrays), plus the column types. */
export async function readParquetRows(path: string): Promise<{ rows: Record<string, unknown>[]; types: Record<string, string> }> {
  const bytes = new Uint8Array(await readFile(path));
  const table = tableFromIPC(readParquet(bytes).intoIPCStream());
  const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]));
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < table.numRows; i++) {
    const row: Record<string, unknown> = {};
    for (const field of table.schema.fields) row[field.name] = plain(table.getChild(field.name)?.get(i));
    rows.push(row);
  }
  return { rows, types };
}
