import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts one of this package's worker scripts. From TypeScript sources (tests, `--conditions=@agl/source`) the
 * worker registers tsx first and then imports the `.ts` entry; from the build it runs `dist/worker/<name>.js`.
 */
export function spawnWorker(name: 'inference-worker' | 'trainer-worker', workerData?: unknown): Worker {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    const tsxDir = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
    const tsxApi = pathToFileURL(join(tsxDir, 'dist/esm/api/index.mjs')).href;
    const entry = new URL(`./${name}.ts`, import.meta.url).href;
    const boot = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, { eval: true, execArgv: ['--conditions=@agl/source'], workerData });
  }
  for (const candidate of [`./worker/${name}.js`, `./${name}.js`, `../worker/${name}.js`]) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return new Worker(url, { workerData });
  }
  throw new Error(`tiny-llm worker script ${name}.js is missing next to ${here}; rebuild @agl/tiny-llm.`);
}
