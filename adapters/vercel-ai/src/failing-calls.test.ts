import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import type { Span } from '@agl/core';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import {
  memoryStoreServing,
  runInProduction,
  runUntracedAndPreloaded,
  scriptedWeatherRespond,
  startOpenAiTestServer,
  useOpenAiTestServer,
  useServedStore,
} from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ai7App } from './__fixtures__/ai7-app';
import { registerAglTelemetry } from './agl-telemetry';
import { generateText, stepCountIs, streamText, tool } from './ai';

/** The same failing script on AI SDK 6 (this package's `ai`) and on AI SDK 7 (a copy in an app with `ai@7`). */
const sdks = [
  { sdk: 'AI SDK 6', major: 6, script: fileURLToPath(new URL('./__fixtures__/failing-agent.ts', import.meta.url)) },
  { sdk: 'AI SDK 7', major: 7, script: join(ai7App(['weather-agent.ts', 'failing-agent.ts']), 'failing-agent.ts') },
];

/** The model: 400 for a prompt starting `fail:`, else call get_weather once, then answer from the tool result. */
const respond = scriptedWeatherRespond({
  failPrefix: 'fail:',
  answer: (result) => (result.includes('down') ? 'The weather service is down.' : 'It is sunny.'),
});

/** Every parent id names a stored span of the rollout: no span hangs under one that was never written. */
function expectNoDanglingParents(spans: Span[]): void {
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) if (s.parentId !== null) expect(ids.has(s.parentId), `parent of ${s.name}`).toBe(true);
}

const agentSpan = (spans: Span[], name: string): Span => {
  const span = spans.find((s) => s.name === `agent ${name}`);
  expect(span, `agent ${name} span`).toBeDefined();
  return span!;
};
const children = (spans: Span[], parent: Span): Span[] => spans.filter((s) => s.parentId === parent.spanId);

describe.each(sdks)(
  'failing calls ($sdk): the same script untraced and with --import @agl/vercel-ai/register',
  ({ major, script }) => {
    const llm = useOpenAiTestServer({ respond });
    const served = useServedStore(memoryStoreServing({ MemoryStore, createStoreServer }));

    async function runBoth(mode: string): Promise<{ stdout: string; spans: Span[] }> {
      const program = {
        args: [script, mode],
        register: '@agl/vercel-ai/register',
        env: { OPENAI_BASE_URL: llm().baseURL, OPENAI_API_KEY: 'sk-agl-test', AGL_TEST_MODEL: 'test-model' },
      };
      const { plain, traced, spans } = await runUntracedAndPreloaded(program, served, { input: { mode } });
      expect(traced.code, traced.stderr).toBe(plain.code);
      expect(traced.stdout).toBe(plain.stdout);
      // The preloaded app ran its own AI SDK (the SDK names itself in the user agent), not the adapter's.
      expect(String(llm().requests.at(-1)!.headers['user-agent'])).toMatch(new RegExp(`\\bai/${major}\\.`));
      return { stdout: traced.stdout, spans };
    }

    function expectFailedThenSibling(spans: Span[]): void {
      const failed = agentSpan(spans, 'first');
      expect(failed.status.statusCode).toBe('ERROR');
      expect(failed.status.description).toContain('context length exceeded');
      const [step] = children(spans, failed);
      expect(step?.name).toBe('openai.chat.completion');
      expect(step?.status.statusCode).toBe('ERROR');
      const second = agentSpan(spans, 'second');
      expect(second.parentId).toBeNull();
      expect(second.status.statusCode).not.toBe('ERROR');
      expect(
        children(spans, second)
          .map((s) => s.name)
          .sort(),
      ).toEqual(['openai.chat.completion', 'openai.chat.completion', 'tool get_weather']);
      expectNoDanglingParents(spans);
    }

    const failingApis = [
      { api: 'generateText', mode: 'generate-400', failure: 'first failed: context length exceeded' },
      { api: 'streamText', mode: 'stream-400', failure: 'stream error: context length exceeded' },
      { api: 'ToolLoopAgent.generate', mode: 'agent-400', failure: 'first failed: context length exceeded' },
    ];
    for (const { api, mode, failure } of failingApis) {
      it(
        `${api}: the model answers 400; the agent and step spans end with the error`,
        { timeout: 60_000 },
        async () => {
          const { stdout, spans } = await runBoth(mode);
          expect(stdout).toContain(failure);
          expect(stdout).toContain('second: It is sunny.');
          expectFailedThenSibling(spans);
        },
      );
    }

    it(
      'ToolLoopAgent.generate failing in production mode: one failed rollout with its agent and step spans, then the next',
      { timeout: 60_000 },
      async () => {
        const { run, rollouts } = await runInProduction(
          {
            args: [script, 'agent-400'],
            register: '@agl/vercel-ai/register',
            env: { OPENAI_BASE_URL: llm().baseURL, OPENAI_API_KEY: 'sk-agl-test', AGL_TEST_MODEL: 'test-model' },
          },
          served,
        );
        expect(run.code, run.stderr).toBe(0);
        // The store is shared with the runner-mode tests: this run's rollouts are the unscoped ones.
        const byAgent = (name: string) =>
          rollouts.find(
            (r) => r.rollout.metadata?.source === 'unscoped' && r.spans.some((s) => s.name === `agent ${name}`),
          );
        const failed = byAgent('first');
        expect(failed?.rollout.status).toBe('failed');
        const agent = agentSpan(failed!.spans, 'first');
        expect(agent.status.statusCode).toBe('ERROR');
        expect(children(failed!.spans, agent).map((s) => [s.name, s.status.statusCode])).toEqual([
          ['openai.chat.completion', 'ERROR'],
        ]);
        expect(byAgent('second')?.rollout.status).toBe('succeeded');
      },
    );

    it('a tool throws: the tool span ends with the error and the call goes on', { timeout: 60_000 }, async () => {
      const { stdout, spans } = await runBoth('tool-throws');
      expect(stdout).toContain('first: The weather service is down.');
      const first = agentSpan(spans, 'first');
      const tool = children(spans, first).find((s) => s.name === 'tool get_weather');
      expect(tool?.status.statusCode).toBe('ERROR');
      expect(tool?.status.description).toContain('weather service down for Paris');
      expect(agentSpan(spans, 'second').parentId).toBeNull();
      expectNoDanglingParents(spans);
    });
  },
);

describe('one-line form: generateText / streamText from @agl/vercel-ai/ai', () => {
  it('a failed call ends its spans with the error and the next call is its sibling', { timeout: 30_000 }, async () => {
    registerAglTelemetry();
    const llm = await startOpenAiTestServer({ respond });
    try {
      const model = createOpenAI({ baseURL: llm.baseURL, apiKey: 'k' }).chat('test-model');
      const get_weather = tool({
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `sunny in ${city}`,
      });
      const call = (prompt: string, functionId: string) => ({
        model,
        prompt,
        tools: { get_weather },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
        experimental_telemetry: { functionId },
      });
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      await withRolloutContext(
        { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
        async () => {
          await expect(generateText(call('fail: weather?', 'first'))).rejects.toThrow('context length exceeded');
          const stream = streamText({ ...call('fail: again', 'streamed'), onError: () => undefined });
          await stream.consumeStream();
          await generateText(call('weather in Rome?', 'second'));
        },
      );
      await getAglTracer().forceFlush();
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      for (const name of ['first', 'streamed']) {
        const failed = agentSpan(spans, name);
        expect(failed.status.statusCode).toBe('ERROR');
        expect(children(spans, failed).map((s) => s.status.statusCode)).toEqual(['ERROR']);
      }
      expect(agentSpan(spans, 'second').parentId).toBeNull();
      expectNoDanglingParents(spans);
    } finally {
      await llm.close();
    }
  });
});
