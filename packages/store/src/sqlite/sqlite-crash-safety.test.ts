import { execFile } from 'node:child_process';
import { openSync, readSync, closeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tempFileEachTest } from '../__fixtures__/temp-file';
import { SqliteStore } from './index';

const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
/**
 * Spans per transaction, 8 kB each: ~24 MiB, more than better-sqlite3's 16 MiB page cache, so SQLite writes pages out
 * (to the WAL, as uncommitted frames) before the transaction ends.
 */
const BATCH = 3000;
/** Each round: one whole commit, then a SIGKILL after this many rows of the next (the last: just before COMMIT). */
const KILL_AT = [Math.round(BATCH * 0.75), Math.round(BATCH * 0.9), BATCH];

/** Runs a child that commits one batch and SIGKILLs itself inside the next; resolves with the batches it acknowledged. */
async function commitThenDie(path: string, first: number, killAt: number): Promise<number[]> {
  const args = [
    '--conditions=@agl/source',
    '--import',
    'tsx',
    join(here, '__fixtures__', 'commit-until-killed.ts'),
    path,
    String(first),
    String(BATCH),
    '1',
    String(killAt),
  ];
  const outcome = await run(process.execPath, args, { cwd: here, timeout: 60_000 }).then(
    () => ({ signal: null, stdout: '' }),
    (error: { signal: NodeJS.Signals | null; stdout: string }) => error,
  );
  expect(outcome.signal).toBe('SIGKILL');
  return outcome.stdout
    .trim()
    .split('\n')
    .map((line) => Number(line.replace('ACK ', '')));
}

/** The first 100 bytes of the file: SQLite's database header. */
function header(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const bytes = Buffer.alloc(100);
    readSync(fd, bytes, 0, 100, 0);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

describe('SqliteStore crash safety', { timeout: 120_000 }, () => {
  const tmp = tempFileEachTest('agl-sqlite-crash-', 'crash.sqlite');

  it('a process SIGKILLed inside large transactions leaves a sound WAL file: every acknowledged batch whole, no partial batch', async () => {
    const acked: number[] = [];
    const killed: number[] = [];
    for (const [i, killAt] of KILL_AT.entries()) {
      const first = i * 2 + 1;
      expect(await commitThenDie(tmp.path, first, killAt)).toEqual([first]);
      acked.push(first);
      killed.push(first + 1);
    }

    // The file itself says WAL (header bytes 18-19: file format versions, 2 = WAL, 1 = rollback journal)...
    const bytes = header(tmp.path);
    expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    expect([bytes[18], bytes[19]]).toEqual([2, 2]);
    // ...and so does a second connection that never ran `journal_mode = WAL` itself.
    const db = new Database(tmp.path);
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const counts = new Map<number, number>();
      const rows = db
        .prepare("SELECT substr(span_id, 2, instr(span_id, '-') - 2) AS batch FROM spans ORDER BY seq")
        .pluck()
        .all();
      for (const batch of rows as string[]) counts.set(Number(batch), (counts.get(Number(batch)) ?? 0) + 1);
      // Whole batches only: each acknowledged one complete, nothing of the transactions the kills cut short.
      expect([...counts]).toEqual(acked.map((batch) => [batch, BATCH]));
      for (const batch of killed) expect(counts.has(batch), `batch ${batch} was cut short`).toBe(false);
    } finally {
      db.close();
    }

    // The store opens the file again and takes writes.
    const store = new SqliteStore({ path: tmp.path });
    await store.enqueueRollout({ input: 'after the crashes' });
    expect((await store.queryRollouts()).total).toBe(KILL_AT.length + 1);
    await store.close();
  });
});
