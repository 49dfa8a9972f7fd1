/**
 * Zero-code preload: `node --import @agl/openai-agents/register app.js`. Adds the AGL processor beside the SDK's
 * default trace exporter and the app's own processors (`AGL_OPENAI_AGENTS_EXCLUSIVE=1`: AGL's alone), keeps AGL
 * recording when the app turns tracing off, and writes the spans to the runner's rollout (`AGL_ROLLOUT_ID` /
 * `AGL_ATTEMPT_ID` / `AGL_STORE_URL`).
 */
import { initObserveFromEnv, StoreClient } from '@agl/client';
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { addAglTraceProcessor } from './install';

await installProcessRolloutFromEnv({ createStore: (options) => new StoreClient(options) });
// A service (AGL_STORE_URL set, no runner rollout): LLM calls outside any observe() become one-call rollouts.
initObserveFromEnv();
addAglTraceProcessor();
