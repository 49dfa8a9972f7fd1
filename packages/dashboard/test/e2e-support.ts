import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startAglStoreServe, type AglStoreServe } from '@agl/testing';

/** The monorepo root. */
export const ROOT = resolve(import.meta.dirname, '../../..');
/** This package. */
export const PACKAGE_DIR = resolve(import.meta.dirname, '..');

/** Path of Debian's chromium (`which chromium`), or `null`. */
export function findChromium(): string | null {
  const found = spawnSync('which', ['chromium'], { encoding: 'utf8' });
  const path = found.status === 0 ? found.stdout.trim() : '';
  return path !== '' && existsSync(path) ? path : null;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (!entry.name.includes('.test.')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds the web app (vite) when dist/app is missing or older than src/app. */
export function ensureDashboardBuilt(): void {
  const index = join(PACKAGE_DIR, 'dist', 'app', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestMtime(join(PACKAGE_DIR, 'src', 'app'))) return;
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const built = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: PACKAGE_DIR,
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`vite build of the dashboard failed:\n${built.stdout}\n${built.stderr}`);
}

/** A running `agl store serve`. */
export type ServedStore = AglStoreServe;

/** Starts `agl store serve --db <db> --port 0 --token <token>` and waits for its `AGL_STORE_URL=` line. */
export function serveStore(db: string, token: string): Promise<ServedStore> {
  return startAglStoreServe(['--db', db], token);
}
