import { fileURLToPath } from 'node:url';
import type { Span } from '@agl/core';
import { ATTR_TOOL_CALL_ID, SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import {
  runNode,
  SOURCE_NODE_FLAGS,
  startOpenAiTestServer,
  type OpenAiTestServer,
  type TestLlmReply,
  type TestLlmRequest,
} from '@agl/testing';
import { run } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAglTraceProcessor } from './install';
import { weatherAgent } from './__fixtures__/weather-agent';

const app = fileURLToPath(new URL('./__fixtures__/app-cases.ts', import.meta.url));

/** The model: get_weather first; then an answer from the tool result, or a 400 when the prompt says `fail mid-run`. */
function respond(request: TestLlmRequest): TestLlmReply {
  const result = request.messages.find((m) => m.role === 'tool');
  if (!result) return { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
  if (request.messages.some((m) => m.role === 'user' && m.content.startsWith('fail mid-run')))
    return { error: { status: 400, message: 'context length exceeded' } };
  return { content: result.content.includes('sunny') ? 'It is sunny in Paris.' : 'The weather service is down.' };
}

/** Runs a TypeScript fixture from the sources, as `node <args>`. */
const runSource = (args: string[], env: NodeJS.ProcessEnv) => runNode([...SOURCE_NODE_FLAGS, ...args], env);

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
  let llm: OpenAiTestServer;
  let store: MemoryStore;
  let server: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    llm = await startOpenAiTestServer({ respond });
    store = new MemoryStore();
    server = await createStoreServer({ store, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
  });

  /** Runs the app case both ways (tracing on by default: no NODE_ENV=test); same exit code and stdout. */
  async function runBoth(
    mode: string,
    extraEnv: NodeJS.ProcessEnv = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string; spans: Span[] }> {
    const rollout = await store.startRollout({ input: { mode } });
    const env = {
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'sk-agl-test',
      AGL_TEST_MODEL: 'test-model',
      NODE_ENV: 'production',
      ...extraEnv,
    };
    const plain = await runSource([app, mode], env);
    const traced = await runSource(['--import', '@agl/openai-agents/register', app, mode], {
      ...env,
      AGL_STORE_URL: server.url,
      AGL_ROLLOUT_ID: rollout.rolloutId,
      AGL_ATTEMPT_ID: rollout.attempt.attemptId,
    });
    expect(traced.code, traced.stderr).toBe(plain.code);
    expect(traced.stdout).toBe(plain.stdout);
    return { ...traced, spans: (await store.querySpans({ rolloutId: rollout.rolloutId })).items };
  }

  it(
    "keeps the app's own processor and the SDK's OpenAI dashboard exporter beside AGL",
    { timeout: 90_000 },
    async () => {
      const { stdout, spans } = await runBoth('dashboard');
      expect(stdout).toContain('It is sunny in Paris.');
      expect(stdout).toMatch(/own processor spans: [1-9]\d*, dashboard items: [1-9]\d*/);
      expectRunSpans(spans, 2);
    },
  );

  it(
    'AGL_OPENAI_AGENTS_EXCLUSIVE=1 leaves AGL alone: the dashboard exporter gets nothing',
    { timeout: 90_000 },
    async () => {
      const rollout = await store.startRollout({ input: {} });
      const env = {
        OPENAI_BASE_URL: llm.baseURL,
        OPENAI_API_KEY: 'sk-agl-test',
        NODE_ENV: 'production',
        AGL_OPENAI_AGENTS_EXCLUSIVE: '1',
      };
      const traced = await runSource(['--import', '@agl/openai-agents/register', app, 'dashboard'], {
        ...env,
        AGL_STORE_URL: server.url,
        AGL_ROLLOUT_ID: rollout.rolloutId,
        AGL_ATTEMPT_ID: rollout.attempt.attemptId,
      });
      expect(traced.code, traced.stderr).toBe(0);
      expect(traced.stdout).toMatch(/own processor spans: [1-9]\d*, dashboard items: 0/);
      expectRunSpans((await store.querySpans({ rolloutId: rollout.rolloutId })).items, 2);
    },
  );

  it(
    'an app that sets its own processors (setTraceProcessors) keeps them, and AGL still records',
    { timeout: 90_000 },
    async () => {
      const { stdout, spans } = await runBoth('set-processors');
      expect(stdout).toMatch(/own processor spans: [1-9]\d*, dashboard items: 0/);
      expectRunSpans(spans, 2);
    },
  );

  it(
    'setTracingDisabled(true) (hello-world-gpt-oss): the app still exports nothing, AGL keeps recording',
    { timeout: 90_000 },
    async () => {
      const { stdout, spans } = await runBoth('tracing-disabled');
      expect(stdout).toContain('own processor spans: 0, dashboard items: 0');
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
