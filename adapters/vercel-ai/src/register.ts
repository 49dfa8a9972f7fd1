/**
 * Zero-code preload: `node --import @agl/vercel-ai/register app.js`. Registers the AGL telemetry integration globally
 * so every `generateText` / `streamText` call is traced with no per-call flag, serves the app's ESM `import from 'ai'`
 * through `@agl/vercel-ai/ai` (failing calls end their spans with the error), and writes the spans to the runner's
 * rollout (`AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`).
 */
import { register } from 'node:module';
import { initObserveFromEnv, StoreClient } from '@agl/client';
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { registerAglTelemetry } from './agl-telemetry';

await installProcessRolloutFromEnv({ createStore: (options) => new StoreClient(options) });
// A service (AGL_STORE_URL set, no runner rollout): LLM calls outside any observe() become one-call rollouts.
initObserveFromEnv();
registerAglTelemetry();
// Built: dist/register.js next to dist/ai.js; from sources: src/register.ts next to src/ai.ts.
const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
register(new URL(`./ai-hooks.${ext}`, import.meta.url), {
  data: { wrapperUrl: new URL(`./ai.${ext}`, import.meta.url).href, packageUrl: new URL('../', import.meta.url).href },
});
