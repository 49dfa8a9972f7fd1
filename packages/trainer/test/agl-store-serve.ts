import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The repo root and the `agl` CLI entry, run from source. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
export const AGL_BIN = join(REPO_ROOT, 'packages/cli/src/bin.ts');
/** Node flags to run workspace TypeScript sources. */
export const SOURCE_FLAGS = ['--conditions=@agl/source', '--import', 'tsx'];

/** A running `agl store serve` child. */
export interface AglStoreServe {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Start `agl store serve --port 0` as a real child process and wait for its `AGL_STORE_URL=` line. */
export function startAglStoreServe(options: { path: string; token?: string }): Promise<AglStoreServe> {
  const args = [...SOURCE_FLAGS, AGL_BIN, 'store', 'serve', '--port', '0', '--db', options.path];
  if (options.token) args.push('--token', options.token);
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: '1' },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agl store serve did not print AGL_STORE_URL within 60s; stderr:\n${stderr}`));
    }, 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /AGL_STORE_URL=(\S+)/u.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          child,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agl store serve exited with ${code} before printing its URL; stderr:\n${stderr}`));
    });
  });
}
