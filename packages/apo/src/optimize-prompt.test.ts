import { MemoryStore } from '@agl/store';
import { roomSelectorRuleLlm, useTestLlmAndDir } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { roomAgent, roomTasks, ROOM_APO_SEARCH, ROOM_SEED_PROMPT } from './demo/index';
import { optimizePrompt } from './index';

const suite = useTestLlmAndDir({ respond: roomSelectorRuleLlm, dirPrefix: 'agl-optimize-prompt-' });

describe('optimizePrompt', () => {
  it('runs the agent with the llm and system_prompt resources and returns the best prompt', async () => {
    const store = new MemoryStore();
    const result = await optimizePrompt({
      agent: roomAgent,
      train: roomTasks(12, 7, 't'),
      val: roomTasks(12, 99, 'v'),
      seedPrompt: ROOM_SEED_PROMPT,
      baseURL: suite.llm.baseURL,
      apiKey: 'sk-test',
      agentModel: 'agent-model',
      gradientModel: 'critic-model',
      applyEditModel: 'editor-model',
      store,
      apo: { ...ROOM_APO_SEARCH, llm: { baseURL: suite.llm.baseURL, retryBaseDelayMs: 1 } },
    });
    expect(result.bestScore).toBeGreaterThan(result.seedScore! + 0.3);
    expect(result.bestPrompt.startsWith(ROOM_SEED_PROMPT)).toBe(true);
    const best = await store.getResourcesById(result.bestResourcesId);
    expect(best?.resources.llm).toMatchObject({ model: 'agent-model', endpoint: suite.llm.baseURL, apiKey: 'sk-test' });
    expect(best?.resources.system_prompt).toMatchObject({ template: result.bestPrompt });
    const models = new Set(suite.llm.requests.map((r) => (r.body as { model?: string }).model));
    expect(models).toEqual(new Set(['agent-model', 'critic-model', 'editor-model']));
  });
});
