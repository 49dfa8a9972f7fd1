/**
 * Zero-code preload: `node --import @agl/vercel-ai/register app.js`. Registers the AGL telemetry integration globally
 * so every `generateText` / `streamText` call is traced with no per-call flag, and writes the spans to the runner's
 * rollout (`AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`).
 */
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { registerAglTelemetry } from './agl-telemetry';

await installProcessRolloutFromEnv({
  createStore: async (options) => new (await import('@agl/store/client')).StoreClient(options),
});
registerAglTelemetry();
