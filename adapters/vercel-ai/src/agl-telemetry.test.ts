import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { TraceToTransitions } from '@agl/core/transitions';
import { getAglTracer, withoutRecording, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { describeAdapterConformance, memoryStoreServing, startOpenAiTestServer } from '@agl/testing';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { aglMiddleware } from './agl-middleware';
import { registerAglTelemetry } from './agl-telemetry';
import { ai7App } from './__fixtures__/ai7-app';
import { generateWeather, streamWeather } from './__fixtures__/weather-agent';

const agentFile = fileURLToPath(new URL('./__fixtures__/weather-agent.ts', import.meta.url));
const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../../packages/core/src/transitions/__fixtures__/vercel-ai/${name}.json`, import.meta.url));

interface WeatherAgent {
  generateWeather: typeof generateWeather;
  streamWeather: typeof streamWeather;
}

/** The same weather agent on AI SDK 6 (this package's `ai`) and on AI SDK 7 (a copy in an app with `ai@7`). */
const sdks: { sdk: string; agentFile: string; load: () => Promise<WeatherAgent> }[] = [
  { sdk: 'AI SDK 6', agentFile, load: async () => ({ generateWeather, streamWeather }) },
  {
    sdk: 'AI SDK 7',
    agentFile: join(ai7App(['weather-agent.ts', 'failing-agent.ts']), 'weather-agent.ts'),
    load: async () => (await import(pathToFileURL(join(ai7App.dir, 'weather-agent.ts')).href)) as WeatherAgent,
  },
];

describeAdapterConformance({
  name: '@agl/vercel-ai',
  ...memoryStoreServing({ MemoryStore, createStoreServer }),
  targets: sdks.flatMap(({ sdk, agentFile, load }) => [
    {
      name: `generateText with tools (${sdk})`,
      agentName: 'weather_agent',
      explicit: async (env) => {
        registerAglTelemetry();
        await (await load()).generateWeather(env.model, env.baseURL, env.apiKey);
      },
      preload: { agentFile, register: '@agl/vercel-ai/register' },
      fixturePath: fixture('generate-text'),
    },
    {
      name: `streamText with tools (${sdk})`,
      agentName: 'weather_agent',
      explicit: async (env) => {
        registerAglTelemetry();
        await (await load()).streamWeather(env.model, env.baseURL, env.apiKey);
      },
      preload: { agentFile, register: '@agl/vercel-ai/register', args: ['--stream'] },
      fixturePath: fixture('stream-text'),
    },
  ]),
});

describe('aglMiddleware (explicit wrapLanguageModel option)', () => {
  it('writes the LLM span with logprobs and sends traceparent / rollout headers', { timeout: 30_000 }, async () => {
    const llm = await startOpenAiTestServer({ respond: () => ({ content: '5' }) });
    try {
      const openai = createOpenAI({ baseURL: llm.baseURL, apiKey: 'k' });
      const model = wrapLanguageModel({ model: openai.chat('test-model'), middleware: aglMiddleware() });
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      await withRolloutContext({ rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store }, () =>
        generateText({
          model,
          prompt: 'What is 2 + 3?',
          providerOptions: { openai: { logprobs: true } },
          maxRetries: 0,
        }),
      );
      await getAglTracer().forceFlush();
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      const own = spans.filter((s) => s.attributes['gen_ai.response.id'] !== undefined);
      const transitions = new TraceToTransitions().transitions(spans);
      expect(transitions).toHaveLength(1);
      const [transition] = transitions;
      expect(transition?.action.message.content).toBe('5');
      expect(transition?.action.logprobs?.map((l) => l.token).join('')).toBe('5');
      const headers = llm.requests.at(-1)!.headers;
      expect(headers['x-rollout-id']).toBe(rollout.rolloutId);
      expect(own.map((s) => s.spanId)).toContain(String(headers.traceparent).split('-')[2]);

      // Inside withoutRecording (a request observe leaves unrecorded): the bare model call, no span, no header.
      const unowned = getAglTracer().stats().unowned;
      const bare = await withRolloutContext(
        { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
        () => withoutRecording(() => generateText({ model, prompt: 'What is 2 + 3?', maxRetries: 0 })),
      );
      await getAglTracer().forceFlush();
      expect(bare.text).toBe('5');
      expect((await store.querySpans({ rolloutId: rollout.rolloutId })).items).toHaveLength(spans.length);
      expect(getAglTracer().stats().unowned).toBe(unowned);
      expect(llm.requests.at(-1)!.headers.traceparent).toBeUndefined();
      expect(llm.requests.at(-1)!.headers['x-rollout-id']).toBeUndefined();
    } finally {
      await llm.close();
    }
  });
});

describe('call nesting', () => {
  it(
    'keeps sequential calls as siblings and nests a call made inside a tool under that tool',
    { timeout: 30_000 },
    async () => {
      registerAglTelemetry();
      const llm = await startOpenAiTestServer({
        respond: (r) =>
          r.tools.length > 0 && !r.messages.some((m) => m.role === 'tool')
            ? { toolCalls: [{ name: 'ask', arguments: { q: 'x' } }] }
            : { content: 'ok' },
      });
      try {
        const openai = createOpenAI({ baseURL: llm.baseURL, apiKey: 'k' });
        const model = openai.chat('test-model');
        const store = new MemoryStore();
        const rollout = await store.startRollout({ input: {} });
        await withRolloutContext(
          { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
          async () => {
            await generateText({ model, prompt: 'first', experimental_telemetry: { functionId: 'first' } });
            const ask = tool({
              inputSchema: z.object({ q: z.string() }),
              execute: async () =>
                (await generateText({ model, prompt: 'inner', experimental_telemetry: { functionId: 'inner' } })).text,
            });
            await generateText({
              model,
              prompt: 'outer',
              tools: { ask },
              stopWhen: stepCountIs(3),
              experimental_telemetry: { functionId: 'outer' },
            });
          },
        );
        await getAglTracer().forceFlush();
        const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
        const byName = (name: string) => spans.find((s) => s.name === name)!;
        expect(byName('agent first').parentId).toBeNull();
        expect(byName('agent outer').parentId).toBeNull();
        expect(byName('agent inner').parentId).toBe(byName('tool ask').spanId);
        expect(byName('tool ask').parentId).toBe(byName('agent outer').spanId);
        expect(new TraceToTransitions({ agentMatch: 'inner' }).transitions(spans)).toHaveLength(1);
      } finally {
        await llm.close();
      }
    },
  );
});
