import { fileURLToPath } from 'node:url';
import type { Span } from '@agl/core';
import { ATTR_STREAM_UNREAD, SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import {
  failingWeatherRespond,
  FAILING_MODEL_MESSAGE,
  memoryStoreServing,
  runInProduction,
  runUntraced,
  runUntracedAndPreloaded,
  scriptedWeatherRespond,
  stableRun,
  useOpenAiTestServer,
  useServedStore,
  weatherRespond,
  type NodeRun,
  type OpenAiTestServer,
} from '@agl/testing';
import { describe, expect, it } from 'vitest';

// Issue 43: a program that ends badly under `--import @agl/openai/register` exits with the same code and prints the
// same thing as without it, and its spans (the failed call, calls cut off, unread streams) still reach the store.
const llmSpans = (spans: Span[]): Span[] => spans.filter((s) => s.name === SPAN_CHAT_COMPLETION);
const agentFile = fileURLToPath(new URL('./__fixtures__/crash-agent.ts', import.meta.url));

describe('openai-node programs that end badly, with and without the preload', () => {
  const failing = useOpenAiTestServer({ respond: failingWeatherRespond });
  const working = useOpenAiTestServer({ respond: weatherRespond });
  const slow = useOpenAiTestServer({ respond: (r) => ({ ...weatherRespond(r), latencyMs: 5_000 }) });
  const served = useServedStore(memoryStoreServing({ MemoryStore, createStoreServer }));

  /** Runs the agent in `mode` without and with the preload (at once); returns both runs and the traced run's spans. */
  async function runBoth(
    mode: string,
    llm: () => OpenAiTestServer,
  ): Promise<{ plain: NodeRun; traced: NodeRun; spans: Span[] }> {
    const program = {
      args: [agentFile, mode],
      register: '@agl/openai/register',
      env: { OPENAI_BASE_URL: llm().baseURL, OPENAI_API_KEY: 'sk-test', AGL_TEST_MODEL: 'test-model' },
    };
    const runs = await runUntracedAndPreloaded(program, served, { input: { mode }, concurrently: true });
    expect(stableRun(runs.traced), 'same exit code, stdout and stderr as without AGL').toEqual(stableRun(runs.plain));
    return runs;
  }

  for (const mode of ['exit-in-catch', 'unhandled', 'tla']) {
    it(
      `${mode}: the model's 400 mid-run; both calls reach the store, the failed one with an ERROR status`,
      { timeout: 60_000 },
      async () => {
        const { plain, spans } = await runBoth(mode, failing);
        expect(plain.code).toBe(1);
        const calls = llmSpans(spans);
        expect(calls.map((s) => s.status.statusCode)).toEqual(['UNSET', 'ERROR']);
        expect(calls[1]!.status.description).toContain(FAILING_MODEL_MESSAGE);
        expect(calls[1]!.attributes['gen_ai.prompt.1.tool_calls.0.name']).toBe('get_weather');
      },
    );
  }

  it('tool-throws: an uncaught tool error; the call before it reaches the store', { timeout: 60_000 }, async () => {
    const { plain, spans } = await runBoth('tool-throws', working);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('weather service down for Paris');
    expect(llmSpans(spans).map((s) => s.attributes['gen_ai.completion.0.tool_calls.0.name'])).toEqual(['get_weather']);
  });

  const cutOff = [
    { mode: 'exit-mid-call', how: 'process.exit(3)', code: 3, cause: 'exited with code 3' },
    { mode: 'sigterm-mid-call', how: 'killed by SIGTERM', code: null, cause: 'got SIGTERM' }, // ended by the signal
  ];
  for (const { mode, how, code, cause } of cutOff) {
    it(`${mode}: ${how} while a call is in flight; the call is closed with an error`, { timeout: 60_000 }, async () => {
      const { plain, spans } = await runBoth(mode, slow);
      expect(plain.code).toBe(code); // the same with and without AGL
      const calls = llmSpans(spans);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.status).toEqual({
        statusCode: 'ERROR',
        description: `the process ${cause} before the span ended`,
      });
    });
  }

  it(
    'unread-stream-exit0: process.exit(0) after an unread stream; its span arrives marked unread',
    { timeout: 60_000 },
    async () => {
      const { plain, spans } = await runBoth('unread-stream-exit0', working);
      expect(plain.code).toBe(0);
      const calls = llmSpans(spans);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.attributes[ATTR_STREAM_UNREAD]).toBe(true);
    },
  );

  it(
    'unread-stream: the stream prints as without AGL, and its span arrives marked unread',
    { timeout: 60_000 },
    async () => {
      const { plain, spans } = await runBoth('unread-stream', working);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toContain('iterator: [AsyncGeneratorFunction: iterator]');
      const calls = llmSpans(spans);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.attributes[ATTR_STREAM_UNREAD]).toBe(true);
      expect(calls[0]!.status.statusCode).toBe('UNSET');
    },
  );
});

// Issue 54: the same programs in production mode (the preload with AGL_STORE_URL only, no runner): each call is an
// unscoped rollout, and what the process leaves at its end (an unread stream, process.exit(0)) is still recorded.
describe('openai-node programs in production mode (preload, AGL_STORE_URL only)', () => {
  const working = useOpenAiTestServer({ respond: weatherRespond });
  const failingFirst = useOpenAiTestServer({
    respond: scriptedWeatherRespond({ failPrefix: 'fail', answer: () => 'unused' }),
  });
  const served = useServedStore(memoryStoreServing({ MemoryStore, createStoreServer }));
  const program = (mode: string) => ({
    args: [agentFile, mode],
    register: '@agl/openai/register',
    env: { OPENAI_BASE_URL: working().baseURL, OPENAI_API_KEY: 'sk-test', AGL_TEST_MODEL: 'test-model' },
  });
  /** The rollouts this run added to the shared store. */
  async function runProduction(mode: string) {
    const before = new Set((await served.store.queryRollouts()).items.map((r) => r.rolloutId));
    const plain = await runUntraced(program(mode));
    const { run, rollouts } = await runInProduction(program(mode), served);
    expect(stableRun(run), 'same exit code, stdout and stderr as without AGL').toEqual(stableRun(plain));
    return { run, rollouts: rollouts.filter((r) => !before.has(r.rollout.rolloutId)) };
  }

  for (const mode of ['unread-stream', 'unread-stream-exit0']) {
    it(`${mode}: the unread stream's span reaches the store, marked unread`, { timeout: 60_000 }, async () => {
      const { run, rollouts } = await runProduction(mode);
      expect(run.code).toBe(0);
      expect(rollouts).toHaveLength(1);
      expect(rollouts[0]!.rollout.metadata?.source).toBe('unscoped');
      const calls = llmSpans(rollouts[0]!.spans);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.attributes[ATTR_STREAM_UNREAD]).toBe(true);
    });
  }

  it(
    'responses.stream() failing: the printed stack has the same frames as without AGL; the call is recorded failed',
    { timeout: 60_000 },
    async () => {
      const fails = { ...program('responses-stream-fails') };
      fails.env = { ...fails.env, OPENAI_BASE_URL: failingFirst().baseURL };
      const before = new Set((await served.store.queryRollouts()).items.map((r) => r.rolloutId));
      const plain = await runUntraced(fails);
      const { run, rollouts } = await runInProduction(fails, served);
      expect(plain.code).toBe(1);
      const frames = (text: string): string[] => text.split('\n').filter((line) => /^\s+at /.test(line));
      expect(frames(plain.stderr).length).toBeGreaterThan(0);
      expect(frames(run.stderr), 'stack frames').toEqual(frames(plain.stderr));
      expect(stableRun(run)).toEqual(stableRun(plain));
      const mine = rollouts.filter((r) => !before.has(r.rollout.rolloutId));
      expect(mine.map((r) => r.rollout.status)).toEqual(['failed']);
    },
  );

  it(
    'responses.stream(): read by finalResponse() and by iteration, each call recorded',
    { timeout: 60_000 },
    async () => {
      const { run, rollouts } = await runProduction('responses-stream');
      expect(run.stdout).toContain('final: completed');
      expect(run.stdout).toContain('last event: response.completed');
      expect(rollouts.map((r) => r.rollout.status)).toEqual(['succeeded', 'succeeded']);
      const prompts = rollouts.flatMap((r) => llmSpans(r.spans)).map((s) => s.attributes['gen_ai.prompt.0.content']);
      expect(prompts.sort()).toEqual(['What is the weather in Paris?', 'What is the weather in Rome?']);
    },
  );
});
