import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';

const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'packages/cli/src/bin.ts');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const ROLLOUTS = 5000;
/**
 * Two runs, at the same time. With `exitCli`'s flush taken out (`process.exit` at once) 10 runs of 10 were cut
 * (at byte 219,264 or 255,808 of ~900 k, 2026-12-07, load average ~12 on 2 cores): the bug shows on every run, so
 * one pair catches it, and 20 runs cost ~57 s for nothing more.
 */
const RUNS = 2;

/** The reader: parses its whole stdin as JSON and prints the item count (exit 1 with the parse error otherwise). */
const READER =
  'let s="";process.stdin.setEncoding("utf8").on("data",(c)=>{s+=c}).on("end",()=>{' +
  'try{const v=JSON.parse(s);process.stdout.write(String(v.items.length))}' +
  'catch(e){process.stdout.write("bytes="+Buffer.byteLength(s)+" "+e.message);process.exitCode=1}})';

const dir = mkdtempSync(join(tmpdir(), 'agl-exit-cli-'));
const db = join(dir, 'store.sqlite');

beforeAll(async () => {
  const store = new SqliteStore({ path: db });
  const requests = Array.from({ length: ROLLOUTS }, (_, i) => ({
    input: { question: `question ${i}`, padding: 'x'.repeat(64) },
  }));
  for (let i = 0; i < requests.length; i += 500) await store.enqueueRollouts(requests.slice(i, i + 500));
  await store.close();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `agl rollouts list --json … | node -e <reader>`: two real processes joined by a real OS pipe (the CLI's stdout is
 * the reader's stdin). Resolves with the CLI's exit code and what the reader printed.
 */
function pipeThroughReader(): Promise<{ code: number | null; readerCode: number | null; read: string; err: string }> {
  return new Promise((resolveRun, reject) => {
    const reader = spawn(process.execPath, ['-e', READER], { stdio: ['pipe', 'pipe', 'inherit'] });
    const cli = spawn(
      process.execPath,
      [
        '--conditions=@agl/source',
        '--import',
        TSX,
        BIN,
        'rollouts',
        'list',
        '--store',
        db,
        '--limit',
        String(ROLLOUTS),
        '--json',
      ],
      { cwd: ROOT, stdio: ['ignore', reader.stdin, 'pipe'], env: { ...process.env, AGL_STORE_URL: '' } },
    );
    // The pipe's write end now belongs to the CLI alone: the reader sees the end of its input when the CLI exits.
    reader.stdin.destroy();
    let err = '';
    cli.stderr!.setEncoding('utf8').on('data', (c: string) => void (err += c));
    let read = '';
    reader.stdout.setEncoding('utf8').on('data', (c: string) => void (read += c));
    let code: number | null | undefined;
    cli.once('error', reject).once('exit', (c) => void (code = c));
    reader.once('error', reject).once('close', (readerCode) => {
      const finish = (): void => resolveRun({ code: code ?? null, readerCode, read, err });
      if (code !== undefined) finish();
      else cli.once('exit', finish);
    });
  });
}

describe('agl exits only once its output is written (exitCli)', () => {
  it(`\`agl rollouts list --json\` of ${ROLLOUTS} rollouts piped through \`node -e\` parses, ${RUNS} runs of ${RUNS}`, async () => {
    const failures: string[] = [];
    // Two runs at a time: the pipe is the same, the wall time on a 2-core machine halves.
    for (let i = 0; i < RUNS; i += 2) {
      const runs = await Promise.all([pipeThroughReader(), pipeThroughReader()]);
      for (const run of runs) {
        expect(run.code, run.err).toBe(0);
        if (run.readerCode !== 0 || run.read !== String(ROLLOUTS)) failures.push(run.read);
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);
});
