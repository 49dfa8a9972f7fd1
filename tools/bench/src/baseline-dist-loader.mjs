// Preload of the observe bench's same-run A/B (`AGL_BENCH_OBSERVE_BASELINE=<dir>`): `node --import
// ./baseline-dist-loader.mjs` makes every import that resolves into a workspace package's built `dist/` folder load the
// copy under `<dir>` instead (`<dir>/packages/core/dist/...` for `packages/core/dist/...`), when that copy exists. So a
// service runs an earlier build of AGL (copied aside before rebuilding) beside the current one, in the same run. `<dir>`
// must lie inside the repository (e.g. under `bench-artifacts/`), so the copies still find `node_modules`. With
// `BENCH_BASELINE_SOURCES=1`, imports of workspace sources (`src/`, run through tsx) are swapped the same way: the
// records ingest bench runs an earlier commit's `agl store serve` from `git archive`d sources.
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = pathToFileURL(fileURLToPath(new URL('../../../', import.meta.url))).href;

/** The resolve hook (runs on the loader thread): `data` is `{ root, baseline }`, both file URLs ending in `/`. */
export async function initialize(data) {
  hookData = data;
}
let hookData = { root: '', baseline: '', sources: false };

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const { root: repo, baseline, sources } = hookData;
  const eligible =
    resolved.url.startsWith(repo) &&
    !resolved.url.startsWith(baseline) &&
    (resolved.url.includes('/dist/') || (sources === true && resolved.url.includes('/src/')));
  if (!baseline || !eligible) return resolved;
  const swapped = baseline + resolved.url.slice(repo.length);
  return existsSync(fileURLToPath(swapped)) ? { ...resolved, url: swapped } : resolved;
}

// The hooks run on the loader thread, which loads this file again: only the main thread registers them.
if (isMainThread && process.env.BENCH_BASELINE_DIR) {
  const baseline = pathToFileURL(process.env.BENCH_BASELINE_DIR).href.replace(/\/?$/u, '/');
  const sources = process.env.BENCH_BASELINE_SOURCES === '1';
  register(import.meta.url, { data: { root, baseline, sources } });
}
