import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { SOURCE_NODE_FLAGS } from './adapter-conformance/run-node';

/** The monorepo root (this file sits two folders below packages/testing, in src/ or dist/ alike). */
const REPO_ROOT = resolve(import.meta.dirname, '../../..');

/** A running `agl store serve` child process. */
export interface AglStoreServe {
  /** The URL it printed as `AGL_STORE_URL=<url>`. */
  url: string;
  /** Its stdout lines so far. */
  lines: string[];
  /** Ends it with SIGTERM and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `agl store serve <storeArgs> --port 0 --token <token>` (the CLI from the workspace sources, e.g. with
 * `['--memory']` or `['--db', file]`) and resolves once it prints its `AGL_STORE_URL=` line; rejects with its stderr
 * when it exits before that.
 */
export function startAglStoreServe(storeArgs: string[], token: string): Promise<AglStoreServe> {
  const child = spawn(
    process.execPath,
    [...SOURCE_NODE_FLAGS, 'packages/cli/src/bin.ts', 'store', 'serve', ...storeArgs, '--port', '0', '--token', token],
    { cwd: REPO_ROOT, env: { ...process.env, AGL_STORE_TOKEN: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines: string[] = [];
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('close', () => done());
      child.kill('SIGTERM');
    });
  return new Promise((done, fail) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const m = /^AGL_STORE_URL=(\S+)/.exec(line);
      if (m) done({ url: m[1]!, lines, stop });
    });
    child.once('close', (code) =>
      fail(new Error(`agl store serve exited with ${code} before printing its URL:\n${stderr}`)),
    );
  });
}
