import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts one of this package's worker scripts. From TypeScript sources (tests, `--conditions=@agl/source`) the
 * worker runs through tsx; from the build it runs the bundled `dist/worker/<name>.js`.
 */
export function spawnWorker(name: 'inference-worker' | 'trainer-worker'): Worker {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    return new Worker(new URL(`./${name}.ts`, import.meta.url), {
      execArgv: ['--conditions=@agl/source', '--import', 'tsx'],
    });
  }
  for (const candidate of [`./worker/${name}.js`, `./${name}.js`, `../worker/${name}.js`]) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return new Worker(url);
  }
  throw new Error(`tiny-llm worker script ${name}.js is missing next to ${here}; rebuild @agl/tiny-llm.`);
}
