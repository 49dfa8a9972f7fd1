/**
 * Zero-code preload: `node --import @agl/openai/register app.js`. Instruments every `openai` client of the app (ESM
 * and CommonJS copies) and, when the runner set `AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`, writes the spans
 * to that rollout.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { instrumentOpenAIClass } from './instrument-openai';

await installProcessRolloutFromEnv({
  createStore: async (options) => new (await import('@agl/store/client')).StoreClient(options),
});
const require = createRequire(pathToFileURL(`${process.cwd()}/`).href);
try {
  const cjs = require('openai') as { default?: unknown; OpenAI?: unknown };
  instrumentOpenAIClass(cjs.OpenAI ?? cjs.default ?? cjs);
  const esm = (await import(pathToFileURL(require.resolve('openai')).href.replace(/\.js$/, '.mjs'))) as {
    default?: unknown;
  };
  instrumentOpenAIClass(esm.default);
} catch {
  const esm = (await import('openai')) as { default?: unknown };
  instrumentOpenAIClass(esm.default);
}
