import { fileURLToPath } from 'node:url';
import type { LightningStore, Span } from '@agl/core';
import { ATTR_STREAM_UNREAD, SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import {
  failingWeatherRespond,
  FAILING_MODEL_MESSAGE,
  runNode,
  SOURCE_NODE_FLAGS,
  stableRun,
  startOpenAiTestServer,
  weatherRespond,
  type NodeRun,
  type OpenAiTestServer,
} from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 43: a program that ends badly under `--import @agl/openai/register` exits with the same code and prints the
// same thing as without it, and its spans (the failed call, calls cut off, unread streams) still reach the store.
const agentFile = fileURLToPath(new URL('./__fixtures__/crash-agent.ts', import.meta.url));

describe('openai-node programs that end badly, with and without the preload', () => {
  let failing: OpenAiTestServer;
  let working: OpenAiTestServer;
  let slow: OpenAiTestServer;
  let store: LightningStore;
  let server: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    failing = await startOpenAiTestServer({ respond: failingWeatherRespond });
    working = await startOpenAiTestServer({ respond: weatherRespond });
    slow = await startOpenAiTestServer({ respond: (r) => ({ ...weatherRespond(r), latencyMs: 5_000 }) });
    store = new MemoryStore();
    server = await createStoreServer({ store, port: 0 });
  });
  afterAll(async () => {
    await server.close();
    await Promise.all([failing.close(), working.close(), slow.close()]);
  });

  /** Runs the agent in `mode` without and with the preload; returns both runs and the traced run's spans. */
  async function runBoth(
    mode: string,
    llm: OpenAiTestServer,
  ): Promise<{ plain: NodeRun; traced: NodeRun; spans: Span[] }> {
    const rollout = await store.startRollout({ input: { mode } });
    const env = { OPENAI_BASE_URL: llm.baseURL, OPENAI_API_KEY: 'sk-test', AGL_TEST_MODEL: 'test-model' };
    const [plain, traced] = await Promise.all([
      runNode([...SOURCE_NODE_FLAGS, agentFile, mode], env),
      runNode([...SOURCE_NODE_FLAGS, '--import', '@agl/openai/register', agentFile, mode], {
        ...env,
        AGL_STORE_URL: server.url,
        AGL_ROLLOUT_ID: rollout.rolloutId,
        AGL_ATTEMPT_ID: rollout.attempt.attemptId,
      }),
    ]);
    expect(stableRun(traced), 'same exit code, stdout and stderr as without AGL').toEqual(stableRun(plain));
    return { plain, traced, spans: (await store.querySpans({ rolloutId: rollout.rolloutId })).items };
  }

  const llmSpans = (spans: Span[]): Span[] => spans.filter((s) => s.name === SPAN_CHAT_COMPLETION);

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

  it(
    'exit-mid-call: process.exit(3) while a call is in flight; the call is closed with an error',
    { timeout: 60_000 },
    async () => {
      const { plain, spans } = await runBoth('exit-mid-call', slow);
      expect(plain.code).toBe(3);
      const calls = llmSpans(spans);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.status).toEqual({
        statusCode: 'ERROR',
        description: 'the process exited with code 3 before the span ended',
      });
    },
  );

  it(
    'sigterm-mid-call: killed by SIGTERM while a call is in flight; the call is closed with an error',
    { timeout: 60_000 },
    async () => {
      const { plain, spans } = await runBoth('sigterm-mid-call', slow);
      expect(plain.code).toBeNull(); // ended by the signal, with and without AGL
      const calls = llmSpans(spans);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.status).toEqual({
        statusCode: 'ERROR',
        description: 'the process got SIGTERM before the span ended',
      });
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
