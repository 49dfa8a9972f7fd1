// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/vercel-ai`.
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { MemoryStore } from '@agl/store';
import { runOverheadBench } from '@agl/testing';
import { registerAglTelemetry } from '../src/index';

// The in-process fake model.
const model = new MockLanguageModelV3({
  doGenerate: async () => ({
    content: [{ type: 'text', text: 'It is sunny.' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 9, noCache: 9, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 4, text: 4, reasoning: 0 },
    },
    warnings: [],
  }),
});
const integration = registerAglTelemetry();

await runOverheadBench({
  adapter: '@agl/vercel-ai',
  store: new MemoryStore(),
  callFor: (traced) => {
    globalThis.AI_SDK_TELEMETRY_INTEGRATIONS = traced ? [integration] : [];
    return () => generateText({ model, system: 'You are a weather agent.', prompt: 'Weather in Paris?' });
  },
});
