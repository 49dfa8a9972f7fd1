import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRewardValue } from '@agl/core/transitions';
import { SqliteStore } from '@agl/store/sqlite';
import { useTestLlmAndDir } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { processAgent, readAgentEnv, Runner } from '../src/index';

const ENV_AGENT = fileURLToPath(new URL('./fixtures/env-agent.ts', import.meta.url));

describe('runFromEnv', () => {
  const suite = useTestLlmAndDir({ dirPrefix: 'agl-env-' });

  it("reads AGL 1.0's three variables: LLM from AGL_OPENAI_BASE_URL/AGL_KEY, ids and mode from the URLs", () => {
    const env = readAgentEnv({
      AGL_OPENAI_BASE_URL: 'http://gw:8000/proxy/rollout/ro-1/attempt/0/mode/train/openai/v1',
      AGL_EVENT_URL: 'http://gw:8000/api/rollouts/ro-1/attempt/0/events',
      AGL_KEY: 'k',
      AGL_TASK_INPUT: '{"q":1}',
    });
    expect(env).toEqual({
      task: { q: 1 },
      mode: 'train',
      rolloutId: 'ro-1',
      attemptId: '0',
      resources: {
        llm: {
          resourceType: 'llm',
          endpoint: 'http://gw:8000/proxy/rollout/ro-1/attempt/0/mode/train/openai/v1',
          model: 'default',
          apiKey: 'k',
          samplingParameters: {},
        },
      },
    });
  });

  it(
    'a TypeScript agent under processAgent gets the env contract and posts its reward to AGL_EVENT_URL',
    { timeout: 120_000 },
    async () => {
      const store = new SqliteStore({ path: join(suite.dir, 's.sqlite') });
      try {
        await store.addResources({ llm: { resourceType: 'llm', endpoint: suite.llm.baseURL, model: 'test-model' } });
        const r = await store.enqueueRollout({ input: { question: 'What is 6 * 7?', expected: 42 }, mode: 'val' });
        const runner = new Runner({
          store,
          agent: processAgent({
            command: process.execPath,
            args: ['--conditions=@agl/source', '--import', 'tsx', ENV_AGENT],
          }),
          pollIntervalSeconds: 0.05,
        });
        const running = runner.run();
        const [done] = await store.waitForRollouts([r.rolloutId], { timeoutSeconds: 60 });
        runner.stop();
        await running;
        expect(done?.status).toBe('succeeded');
        const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
        expect(spans.map(getRewardValue).filter((v) => v !== null)).toEqual([1]);
        expect(suite.llm.requests.at(-1)?.headers.authorization).toMatch(/^Bearer [0-9a-f]{32}$/u);
      } finally {
        await store.close();
      }
    },
  );
});
