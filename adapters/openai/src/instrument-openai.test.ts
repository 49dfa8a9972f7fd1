import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { describeAdapterConformance, memoryStoreServing, startOpenAiTestServer, weatherRespond } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { instrumentOpenAI } from './instrument-openai';
import { runChatAgent, runResponsesAgent } from './__fixtures__/weather-agent';

const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../../packages/core/src/transitions/__fixtures__/openai/${name}.json`, import.meta.url));
const client = (env: { baseURL: string; apiKey: string }): OpenAI =>
  instrumentOpenAI(new OpenAI({ baseURL: env.baseURL, apiKey: env.apiKey, maxRetries: 0 }));

describeAdapterConformance({
  name: '@agl/openai',
  ...memoryStoreServing({ MemoryStore, createStoreServer }),
  targets: [
    {
      name: 'chat.completions',
      agentName: null,
      tokenIds: true,
      propagatesHeaders: true,
      explicit: async (env) => void (await runChatAgent(client(env), env.model)),
      preload: {
        agentFile: fileURLToPath(new URL('./__fixtures__/weather-agent.ts', import.meta.url)),
        register: '@agl/openai/register',
      },
      fixturePath: fixture('chat-completions'),
    },
    {
      name: 'chat.completions streaming',
      agentName: null,
      tokenIds: true,
      explicit: async (env) => void (await runChatAgent(client(env), env.model, true)),
      fixturePath: fixture('chat-completions-stream'),
    },
    {
      name: 'responses',
      agentName: null,
      propagatesHeaders: true,
      explicit: async (env) => void (await runResponsesAgent(client(env), env.model)),
      fixturePath: fixture('responses'),
    },
  ],
});

describe('responses.create streaming', () => {
  it('folds the event stream into one span that ends with the stream', { timeout: 30_000 }, async () => {
    const llm = await startOpenAiTestServer({ respond: weatherRespond });
    try {
      const openai = client({ baseURL: llm.baseURL, apiKey: 'k' });
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      await withRolloutContext(
        { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
        async () => {
          const stream = await openai.responses.create({
            model: 'm',
            input: 'What is the weather in Paris?',
            stream: true,
          });
          const types: string[] = [];
          for await (const event of stream) types.push(event.type);
          expect(types.at(-1)).toBe('response.completed');
        },
      );
      await getAglTracer().forceFlush();
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      expect(spans).toHaveLength(1);
      expect(spans[0]!.attributes).toMatchObject({
        'gen_ai.request.streaming': true,
        'gen_ai.prompt.0.content': 'What is the weather in Paris?',
        'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
        'gen_ai.completion.0.finish_reason': 'tool_calls',
      });
    } finally {
      await llm.close();
    }
  });
});

describe('responses.stream() (the helper)', () => {
  for (const how of ['finalResponse', 'iteration'] as const) {
    it(`is recorded like responses.create streaming, read by ${how}`, { timeout: 30_000 }, async () => {
      const llm = await startOpenAiTestServer({ respond: weatherRespond });
      try {
        const openai = client({ baseURL: llm.baseURL, apiKey: 'k' });
        const store = new MemoryStore();
        const rollout = await store.startRollout({ input: {} });
        await withRolloutContext(
          { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
          async () => {
            const stream = openai.responses.stream({ model: 'm', input: 'What is the weather in Paris?' });
            if (how === 'finalResponse') {
              expect((await stream.finalResponse()).status).toBe('completed');
            } else {
              const types: string[] = [];
              for await (const event of stream) types.push(event.type);
              expect(types.at(-1)).toBe('response.completed');
            }
          },
        );
        await getAglTracer().forceFlush();
        const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
        expect(spans).toHaveLength(1);
        expect(spans[0]!.attributes).toMatchObject({
          'gen_ai.request.streaming': true,
          'gen_ai.prompt.0.content': 'What is the weather in Paris?',
          'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
        });
      } finally {
        await llm.close();
      }
    });
  }
});
