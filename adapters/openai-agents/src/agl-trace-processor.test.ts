import { fileURLToPath } from 'node:url';
import { TraceToTransitions } from '@agl/core/transitions';
import { ATTR_AGENT_NAME } from '@agl/core/semconv';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { describeAdapterConformance, memoryStoreServing, startOpenAiTestServer } from '@agl/testing';
import { Agent, OpenAIChatCompletionsModel, run } from '@openai/agents';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { addAglTraceProcessor } from './install';
import { getWeather, runWeather, weatherAgent } from './__fixtures__/weather-agent';

const agentFile = fileURLToPath(new URL('./__fixtures__/weather-agent.ts', import.meta.url));
const fixture = (name: string): string =>
  fileURLToPath(
    new URL(`../../../packages/core/src/transitions/__fixtures__/openai-agents/${name}.json`, import.meta.url),
  );
const client = (env: { baseURL: string; apiKey: string }): OpenAI =>
  new OpenAI({ baseURL: env.baseURL, apiKey: env.apiKey, maxRetries: 0 });

describeAdapterConformance({
  name: '@agl/openai-agents',
  ...memoryStoreServing({ MemoryStore, createStoreServer }),
  targets: [
    {
      name: 'Responses API model',
      agentName: 'weather_agent',
      explicit: async (env) => {
        addAglTraceProcessor();
        await runWeather(weatherAgent({ api: 'responses', model: env.model, client: client(env) }));
      },
      preload: { agentFile, register: '@agl/openai-agents/register' },
      fixturePath: fixture('responses'),
    },
    {
      name: 'Chat Completions model',
      agentName: 'weather_agent',
      tokenIds: true,
      explicit: async (env) => {
        addAglTraceProcessor();
        await runWeather(weatherAgent({ api: 'chat', model: env.model, client: client(env) }));
      },
      preload: { agentFile, register: '@agl/openai-agents/register', args: ['--chat'] },
      fixturePath: fixture('chat-completions'),
    },
  ],
});

describe('handoff between two agents', () => {
  it('maps the handoff span and agentMatch selects exactly one agent', { timeout: 60_000 }, async () => {
    const llm = await startOpenAiTestServer({
      respond: (r) => {
        const offered = r.tools.map((t) => t.name);
        if (offered.includes('transfer_to_weather_agent'))
          return { toolCalls: [{ name: 'transfer_to_weather_agent', arguments: {} }] };
        return r.messages.some((m) => m.role === 'tool' && m.content.includes('sunny'))
          ? { content: 'It is sunny in Paris.' }
          : { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
      },
    });
    try {
      addAglTraceProcessor();
      const openai = client({ baseURL: llm.baseURL, apiKey: 'k' });
      const specialist = weatherAgent({ api: 'chat', model: 'test-model', client: openai });
      const triage = new Agent({
        name: 'triage',
        instructions: 'Route weather questions.',
        model: new OpenAIChatCompletionsModel(openai, 'test-model'),
        handoffs: [specialist],
      });
      void getWeather;
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      const result = await withRolloutContext(
        { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
        () => run(triage, 'Weather in Paris?'),
      );
      expect(result.finalOutput).toBe('It is sunny in Paris.');
      await getAglTracer().forceFlush();
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      expect(spans.find((s) => s.name === 'handoff')?.attributes['handoff.to_agent']).toBe('weather_agent');
      expect(new Set(spans.map((s) => s.attributes[ATTR_AGENT_NAME]).filter(Boolean))).toEqual(
        new Set(['triage', 'weather_agent']),
      );
      const all = new TraceToTransitions().transitions(spans);
      expect(all.map((t) => t.agentName)).toEqual(['triage', 'weather_agent', 'weather_agent']);
      const only = new TraceToTransitions({ agentMatch: 'weather_agent' }).transitions(spans);
      expect(only.map((t) => t.agentName)).toEqual(['weather_agent', 'weather_agent']);
      expect(only.at(-1)?.action.message.content).toBe('It is sunny in Paris.');
    } finally {
      await llm.close();
    }
  });
});
