/**
 * Zero-code preload: `node --import @agl/langchain/register app.js`. Registers the AGL callback handler through
 * LangChain's configure hook (ESM and CommonJS copies) so `createAgent`, LangGraph graphs and plain runnables are traced
 * without passing callbacks; spans go to the runner's rollout (`AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`).
 */
import { initObserveFromEnv, StoreClient } from '@agl/client';
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { installAglLangChain } from './install';

// First, before any await: the hook lives in an AsyncLocalStorage value that must reach the app's module.
installAglLangChain();
await installProcessRolloutFromEnv({ createStore: (options) => new StoreClient(options) });
// A service (AGL_STORE_URL set, no runner rollout): LLM calls outside any observe() become one-call rollouts.
initObserveFromEnv();
