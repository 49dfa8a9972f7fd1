import { inspect } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import OpenAI from 'openai';
import { ATTR_STREAM_UNREAD } from '@agl/core/semconv';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { startOpenAiTestServer, weatherRespond, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentOpenAI } from './instrument-openai';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * What an app can see of a value: its printout, its class and its own property names. Response ids are masked, and so
 * are the `[Symbol(...)]` lines Node's async hooks put on every promise while an AsyncLocalStorage is active (an async
 * id differs between any two promises).
 */
const looks = (value: object): unknown => ({
  printed: inspect(value, { depth: 0 })
    .replace(/chatcmpl-\w+/g, 'id')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('[Symbol('))
    .join('\n'),
  proto: Object.getPrototypeOf(value),
  keys: Object.getOwnPropertyNames(value),
});

describe('what the app sees of a wrapped call', () => {
  let llm: OpenAiTestServer;
  beforeAll(async () => {
    llm = await startOpenAiTestServer({ respond: weatherRespond });
  });
  afterAll(() => llm.close());

  const body = { model: 'm', messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }] };

  it(
    'the APIPromise and the Stream print, inherit and are named exactly as without AGL',
    { timeout: 30_000 },
    async () => {
      const plain = new OpenAI({ baseURL: llm.baseURL, apiKey: 'k', maxRetries: 0 });
      const traced = instrumentOpenAI(new OpenAI({ baseURL: llm.baseURL, apiKey: 'k', maxRetries: 0 }));
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      await withRolloutContext(
        { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store },
        async () => {
          const [a, b] = [plain.chat.completions.create(body), traced.chat.completions.create(body)];
          expect(looks(b)).toEqual(looks(a));
          await Promise.all([a, b]);
          expect(looks(b)).toEqual(looks(a));
          const [sa, sb] = await Promise.all([
            plain.chat.completions.create({ ...body, stream: true }),
            traced.chat.completions.create({ ...body, stream: true }),
          ]);
          expect(looks(sb)).toEqual(looks(sa));
          expect(inspect(sb)).toContain('iterator: [AsyncGeneratorFunction: iterator]');
          for await (const chunk of sb) void chunk;
          for await (const chunk of sa) void chunk;
        },
      );
    },
  );

  it(
    'a stream never read ends its span, marked unread, once it is garbage collected',
    { timeout: 30_000 },
    async () => {
      const client = instrumentOpenAI(new OpenAI({ baseURL: llm.baseURL, apiKey: 'k', maxRetries: 0 }));
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };
      await withRolloutContext(ctx, async () => {
        await client.chat.completions.create({ ...body, stream: true }); // dropped unread
      });
      const deadline = Date.now() + 20_000;
      let spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      while (spans.length === 0 && Date.now() < deadline) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
        await getAglTracer().forceFlush();
        spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      }
      expect(spans).toHaveLength(1);
      expect(spans[0]!.attributes[ATTR_STREAM_UNREAD]).toBe(true);
      expect(spans[0]!.attributes['gen_ai.request.streaming']).toBe(true);
    },
  );
});
