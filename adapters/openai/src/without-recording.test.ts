import OpenAI from 'openai';
import type { SpanInput } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { getAglTracer, withoutRecording, withRolloutContext } from '@agl/core/tracer';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentOpenAI } from './instrument-openai';

// A request that `observe` does not record (sampled out, buffer full, no store) runs inside withoutRecording: the
// instrumented client must then make the bare SDK call, as without AGL.
describe('an instrumented openai client inside withoutRecording', () => {
  let llm: OpenAiTestServer;
  beforeAll(async () => {
    llm = await startOpenAiTestServer({ respond: () => ({ content: 'pong' }) });
  });
  afterAll(async () => {
    await llm.close();
  });

  it('makes no span and sends no trace headers; inside a rollout the same client does both', async () => {
    const openai = instrumentOpenAI(new OpenAI({ baseURL: llm.baseURL, apiKey: 'sk-test', maxRetries: 0 }));
    const unownedBefore = getAglTracer().stats().unowned;
    const spans: SpanInput[] = [];
    const ctx = {
      rolloutId: 'ro-wr',
      attemptId: 'at-wr',
      store: {} as LightningStore,
      spanSink: (s: SpanInput[]) => spans.push(...s),
    };
    const ask = () =>
      openai.chat.completions.create({ model: 'test-model', messages: [{ role: 'user', content: 'ping' }] });
    const off = await withRolloutContext(ctx, () => withoutRecording(ask));
    expect(off.choices[0]?.message.content).toBe('pong');
    await withRolloutContext(ctx, ask);
    await getAglTracer().forceFlush();
    const [bare, traced] = llm.requests;
    expect(bare!.headers.traceparent).toBeUndefined();
    expect(bare!.headers['x-rollout-id']).toBeUndefined();
    expect(traced!.headers['x-rollout-id']).toBe('ro-wr');
    expect(spans.map((s) => s.name)).toEqual(['openai.chat.completion']);
    expect(getAglTracer().stats().unowned).toBe(unownedBefore);
  });
});
