/**
 * Zero-code preload: `node --import @agl/langchain/register app.js`. Registers the AGL callback handler through
 * LangChain's configure hook (ESM and CommonJS copies) so `createAgent`, LangGraph graphs and plain runnables are traced
 * without passing callbacks; spans go to the runner's rollout (`AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` / `AGL_STORE_URL`).
 */
import { installProcessRolloutFromEnv } from '@agl/core/tracer';
import { installAglLangChain } from './install';

// First, before any await: the hook lives in an AsyncLocalStorage value that must reach the app's module.
installAglLangChain();
await installProcessRolloutFromEnv({
  createStore: async (options) => new (await import('@agl/store/client')).StoreClient(options),
});
