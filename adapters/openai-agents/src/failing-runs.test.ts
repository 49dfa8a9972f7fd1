import { fileURLToPath } from 'node:url';
import type { Span } from '@agl/core';
import { ATTR_TOOL_CALL_ID, SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import {
  memoryStoreServing,
  runPreloaded,
  runUntracedAndPreloaded,
  scriptedWeatherRespond,
  startOpenAiTestServer,
  useOpenAiTestServer,
  useServedStore,
  type NodeRun,
  type PreloadProgram,
} from '@agl/testing';
import { run } from '@openai/agents';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { addAglTraceProcessor } from './install';
import { weatherAgent } from './__fixtures__/weather-agent';

const app = fileURLToPath(new URL('./__fixtures__/app-cases.ts', import.meta.url));

/** The model: get_weather first; then an answer from the tool result, or a 400 when the prompt says `fail mid-run`. */
const respond = scriptedWeatherRespond({
  failPrefix: 'fail mid-run',
  failAfterTool: true,
  answer: (result) => (result.includes('sunny') ? 'It is sunny in Paris.' : 'The weather service is down.'),
});

const named = (spans: Span[], name: string): Span[] => spans.filter((s) => s.name === name);

/** The run's agent span, its LLM spans and its tool span, with the tool span carrying the model's call id. */
function expectRunSpans(spans: Span[], llmCalls: number): void {
  const [agent] = named(spans, 'agent weather_agent');
  expect(agent, 'agent span').toBeDefined();
  expect(named(spans, SPAN_CHAT_COMPLETION)).toHaveLength(llmCalls);
  const [toolSpan] = named(spans, 'tool get_weather');
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const ancestors: string[] = [];
  for (let p = toolSpan?.parentId; p; p = byId.get(p)?.parentId) ancestors.push(p);
  expect(ancestors).toContain(agent!.spanId);
  expect(String(toolSpan?.attributes[ATTR_TOOL_CALL_ID] ?? '')).toMatch(/^call_/);
}

describe('openai-agents apps, untraced and with --import @agl/openai-agents/register', () => {
  const llm = useOpenAiTestServer({ respond });
  const served = useServedStore(memoryStoreServing({ MemoryStore, createStoreServer }));

  /** The app case (tracing on by default: no NODE_ENV=test). */
  const program = (mode: string, extraEnv: NodeJS.ProcessEnv = {}): PreloadProgram => ({
    args: [app, mode],
    register: '@agl/openai-agents/register',
    env: { OPENAI_BASE_URL: llm().baseURL, OPENAI_API_KEY: 'sk-agl-test', NODE_ENV: 'production', ...extraEnv },
  });

  /** Runs the app case both ways; same exit code and stdout. */
  async function runBoth(mode: string): Promise<NodeRun & { spans: Span[] }> {
    const { plain, traced, spans } = await runUntracedAndPreloaded(
      program(mode, { AGL_TEST_MODEL: 'test-model' }),
      served,
      { input: { mode } },
    );
    expect(traced.code, traced.stderr).toBe(plain.code);
    expect(traced.stdout).toBe(plain.stdout);
    return { ...traced, spans };
  }

  const appCases = [
    {
      title: "keeps the app's own processor and the SDK's OpenAI dashboard exporter beside AGL",
      mode: 'dashboard',
      stdout: ['It is sunny in Paris.', /own processor spans: [1-9]\d*, dashboard items: [1-9]\d*/],
    },
    {
      title: 'an app that sets its own processors (setTraceProcessors) keeps them, and AGL still records',
      mode: 'set-processors',
      stdout: [/own processor spans: [1-9]\d*, dashboard items: 0/],
    },
    {
      title: 'setTracingDisabled(true) (hello-world-gpt-oss): the app still exports nothing, AGL keeps recording',
      mode: 'tracing-disabled',
      stdout: ['own processor spans: 0, dashboard items: 0'],
    },
  ];
  for (const { title, mode, stdout: expected } of appCases) {
    it(title, { timeout: 90_000 }, async () => {
      const { stdout, spans } = await runBoth(mode);
      for (const part of expected) {
        if (typeof part === 'string') expect(stdout).toContain(part);
        else expect(stdout).toMatch(part);
      }
      expectRunSpans(spans, 2);
    });
  }

  it(
    'AGL_OPENAI_AGENTS_EXCLUSIVE=1 leaves AGL alone: the dashboard exporter gets nothing',
    { timeout: 90_000 },
    async () => {
      const { run: traced, spans } = await runPreloaded(
        program('dashboard', { AGL_OPENAI_AGENTS_EXCLUSIVE: '1' }),
        served,
      );
      expect(traced.code, traced.stderr).toBe(0);
      expect(traced.stdout).toMatch(/own processor spans: [1-9]\d*, dashboard items: 0/);
      expectRunSpans(spans, 2);
    },
  );

  it('a tool that throws: the tool span ends with the error and the run goes on', { timeout: 90_000 }, async () => {
    const { stdout, spans } = await runBoth('tool-throws');
    expect(stdout).toContain('The weather service is down.');
    expectRunSpans(spans, 2);
    expect(named(spans, 'tool get_weather')[0]?.status.statusCode).toBe('ERROR');
  });

  // The spans of a process that exits in its catch (or on an unhandled rejection) reach the store only with core's
  // crash-time flush; exit code and output must match either way.
  it(
    'a 400 from the model mid-run, process.exit(1) in main().catch: same exit code and output; spans kept',
    { timeout: 90_000 },
    async () => {
      const { code, stderr, spans } = await runBoth('model-400');
      expect(code).toBe(1);
      expect(stderr).toContain('run failed: 400 context length exceeded');
      expectRunSpans(spans, 2);
      expect(named(spans, SPAN_CHAT_COMPLETION).filter((s) => s.status.statusCode === 'ERROR')).toHaveLength(1);
    },
  );

  it('an unhandled rejection: same exit code and output; spans kept', { timeout: 90_000 }, async () => {
    const { code, spans } = await runBoth('unhandled');
    expect(code).toBe(1);
    expectRunSpans(spans, 2);
  });
});

describe('in process: a rollout whose agent throws keeps every span it made', () => {
  it(
    'agent, LLM and tool spans are stored, the failing LLM span and the agent span with the error',
    { timeout: 60_000 },
    async () => {
      const llm = await startOpenAiTestServer({ respond });
      try {
        addAglTraceProcessor();
        const agent = weatherAgent({
          api: 'responses',
          model: 'test-model',
          client: new OpenAI({ baseURL: llm.baseURL, apiKey: 'k', maxRetries: 0 }),
        });
        const store = new MemoryStore();
        const rollout = await store.startRollout({ input: {} });
        await expect(
          withRolloutContext({ rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store }, () =>
            run(agent, 'fail mid-run: weather in Paris?'),
          ),
        ).rejects.toThrow('context length exceeded');
        await getAglTracer().forceFlush();
        const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
        expectRunSpans(spans, 2);
        expect(named(spans, 'agent weather_agent')[0]?.status.statusCode).toBe('ERROR');
        const llmSpans = named(spans, SPAN_CHAT_COMPLETION);
        expect(llmSpans.map((s) => s.status.statusCode).sort()).toEqual(['ERROR', 'UNSET']);
        // The system prompt comes from the agent's instructions: the server does not echo `instructions`.
        expect(llmSpans.some((s) => JSON.stringify(s.attributes).includes('You are a weather agent.'))).toBe(true);
      } finally {
        await llm.close();
      }
    },
  );
});
