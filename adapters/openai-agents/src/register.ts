/**
 * Zero-code preload: `node --import @agl/openai-agents/register app.js`. Replaces the SDK's default trace exporter
 * with the AGL processor (ESM and CommonJS builds), keeps tracing on under test runners, and writes the spans to the
 * runner's rollout (`AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`).
 */
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { addAglTraceProcessor } from './install';

await installProcessRolloutFromEnv({
  createStore: async (options) => new (await import('@agl/store/client')).StoreClient(options),
});
addAglTraceProcessor();
