/**
 * Zero-code preload: `node --import @agl/openai/register app.js`. Instruments every `openai` client of the app (ESM
 * and CommonJS copies) and, when the runner set `AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`, writes the spans
 * to that rollout.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { initObserveFromEnv, StoreClient } from '@agl/client';
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { instrumentOpenAIClass } from './instrument-openai';

await installProcessRolloutFromEnv({ createStore: (options) => new StoreClient(options) });
// A service (AGL_STORE_URL set, no runner rollout): LLM calls outside any observe() become one-call rollouts.
initObserveFromEnv();
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
