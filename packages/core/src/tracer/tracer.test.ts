import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { UserError, ValidationError } from '../errors/index';
import type { Span } from '../schema/index';
import { TraceToTransitions } from '../transitions/index';
import { setUnownedSpanHandler } from './lightning-span-processor';
import { emitAnnotation, emitException, emitMessage, emitObject, emitReward } from './emitters';
import { operation } from './operation';
import { getRolloutContext, withRolloutContext } from './rollout-context';
import { traceOpenAiChat } from './trace-openai-chat';
import { newTracer, RecordingStore, shutdownTracers } from './__fixtures__/recording-store';

afterEach(shutdownTracers);

describe('emitters outside a rollout', () => {
  it('throw a UserError that says how to fix it', () => {
    expect(getRolloutContext()).toBeUndefined();
    expect(() => emitReward(1)).toThrow(UserError);
    expect(() => emitMessage('x')).toThrow(/outside a rollout.*propagate: false/s);
    expect(() => emitObject({})).toThrow(UserError);
    expect(() => emitException(new Error('x'))).toThrow(UserError);
    expect(() => emitAnnotation({ a: 1 })).toThrow(UserError);
    return expect(operation('step', () => 1)).rejects.toThrow(UserError);
  });

  it('only build the span with { propagate: false }', async () => {
    const span = emitReward(0.5, { propagate: false });
    expect(span.name).toBe('agentlightning.annotation');
    expect(span.attributes).toEqual({
      'agentlightning.reward.0.name': 'primary',
      'agentlightning.reward.0.value': 0.5,
    });
    expect(span.startTime).toBe(span.endTime);
    expect(await operation('step', () => 7, { propagate: false })).toBe(7);
  });
});

describe('emitter attributes (AGL 0.3 semantics)', () => {
  const local = { propagate: false } as const;

  it('emitReward: multi-dimensional, first key (or primaryKey) is dimension 0', () => {
    expect(emitReward({ acc: 1, len: 0.2 }, local).attributes).toEqual({
      'agentlightning.reward.0.name': 'acc',
      'agentlightning.reward.0.value': 1,
      'agentlightning.reward.1.name': 'len',
      'agentlightning.reward.1.value': 0.2,
    });
    expect(
      emitReward({ acc: 1, len: 0.2 }, { ...local, primaryKey: 'len' }).attributes['agentlightning.reward.0.name'],
    ).toBe('len');
    expect(emitReward(true, local).attributes['agentlightning.reward.0.value']).toBe(1);
    expect(() => emitReward({ a: 1 }, { ...local, primaryKey: 'b' })).toThrow(ValidationError);
    expect(() => emitReward(Number.NaN, local)).toThrow(ValidationError);
    expect(() => emitReward({ a: 'x' as unknown as number }, local)).toThrow(/reward a must be a finite number/);
    expect(() => emitReward({}, local)).toThrow(ValidationError);
  });

  it('emitReward merges extra attributes', () => {
    expect(emitReward(1, { ...local, attributes: { why: { a: 1 } } }).attributes['why.a']).toBe(1);
  });

  it('emitObject records type and literal or JSON', () => {
    expect(emitObject('s', local).attributes).toEqual({
      'agentlightning.object.type': 'str',
      'agentlightning.object.literal': 's',
    });
    expect(emitObject(3, local).attributes['agentlightning.object.type']).toBe('int');
    expect(emitObject(3.5, local).attributes['agentlightning.object.type']).toBe('float');
    expect(emitObject(false, local).attributes['agentlightning.object.literal']).toBe('False');
    expect(emitObject(new Uint8Array([104, 105]), local).attributes).toEqual({
      'agentlightning.object.type': 'bytes',
      'agentlightning.object.literal': 'aGk=',
    });
    expect(emitObject({ k: [1] }, local).attributes).toEqual({
      'agentlightning.object.type': 'dict',
      'agentlightning.object.json': '{"k":[1]}',
    });
    expect(emitObject([1], local).attributes['agentlightning.object.type']).toBe('list');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => emitObject(cyclic, local)).toThrow(ValidationError);
  });

  it('emitException records the OTel exception keys with status OK', () => {
    const span = emitException(new TypeError('bad'), local);
    expect(span.name).toBe('agentlightning.exception');
    expect(span.attributes).toMatchObject({
      'exception.type': 'TypeError',
      'exception.message': 'bad',
      'exception.escaped': true,
    });
    expect(String(span.attributes['exception.stacktrace'])).toContain('TypeError: bad');
    expect(span.status.statusCode).toBe('OK');
  });

  it('emitMessage and emitAnnotation', () => {
    expect(emitMessage('hello', local).attributes).toEqual({ 'agentlightning.message.body': 'hello' });
    expect(() => emitMessage(1 as unknown as string, local)).toThrow(ValidationError);
    expect(emitAnnotation({ tags: ['a', 'b'], meta: { n: 1, x: null } }, local).attributes).toEqual({
      tags: ['a', 'b'],
      'meta.n': 1,
      'meta.x': 'null',
    });
  });
});

describe('tracer inside rollouts', () => {
  it('sends emitter and operation spans to the rollout store, nested under the operation', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const ctx = { rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer };
    const result = await withRolloutContext(ctx, () =>
      operation('solve', async (op) => {
        op.setInput({ question: 'q' });
        await new Promise((r) => setTimeout(r, 1));
        emitReward(0.9);
        return { answer: 42 };
      }),
    );
    expect(result).toEqual({ answer: 42 });
    await tracer.forceFlush();
    expect(store.spans.map((s) => s.name)).toEqual(['agentlightning.annotation', 'agentlightning.operation']);
    const [reward, op] = store.spans as [Span, Span];
    expect(reward.parentId).toBe(op.spanId);
    expect(reward.traceId).toBe(op.traceId);
    expect(reward.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(op.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(op.attributes).toMatchObject({
      'agentlightning.operation.name': 'solve',
      'agentlightning.operation.input.question': 'q',
      'agentlightning.operation.output.answer': 42,
    });
    expect(store.spans.map((s) => [s.rolloutId, s.attemptId, s.sequenceId])).toEqual([
      ['ro-1', 'at-1', 1],
      ['ro-1', 'at-1', 2],
    ]);
    expect(op.startTime).toBeGreaterThan(1e9);
    expect(op.endTime! >= reward.endTime!).toBe(true);
    expect(op.resource.attributes['agentlightning.tracer.name']).toBe('agl');
    expect(tracer.stats()).toMatchObject({ exported: 2, dropped: 0, failed: 0 });
  });

  it('traceOpenAiChat records the request and the response of a chat call, and a failed call as an error', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const ctx = { rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer };
    const body = { model: 'm1', messages: [{ role: 'user', content: 'hi' }] };
    const reply = { id: 'c1', model: 'm1', choices: [{ index: 0, message: { role: 'assistant', content: 'hello' } }] };
    const answer = await withRolloutContext(ctx, () => traceOpenAiChat(body, async () => reply));
    expect(answer).toBe(reply);
    const failure = withRolloutContext(ctx, () =>
      traceOpenAiChat(body, () => Promise.reject(new Error('upstream 503')), { tracerName: 'agent' }),
    );
    await expect(failure).rejects.toThrow('upstream 503');
    await tracer.forceFlush();
    const [ok, failed] = store.spans as [Span, Span];
    expect(store.spans.map((s) => s.name)).toEqual(['openai.chat.completion', 'openai.chat.completion']);
    expect(ok.attributes).toMatchObject({
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'm1',
      'gen_ai.prompt.0.content': 'hi',
      'gen_ai.completion.0.content': 'hello',
    });
    expect(ok.status.statusCode).toBe('UNSET');
    expect(failed.status).toMatchObject({ statusCode: 'ERROR', description: 'upstream 503' });
    expect(failed.attributes['gen_ai.completion.0.content']).toBeUndefined();
  });

  it("keeps every attribute of a large span (OpenTelemetry's default limit is 128)", async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const ctx = { rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer };
    withRolloutContext(ctx, () => {
      const span = tracer.getTracer().startSpan('big');
      for (let i = 0; i < 600; i++) span.setAttribute(`gen_ai.prompt.${i}.content`, `message ${i}`);
      span.setAttribute('task', 'last one set');
      span.end();
    });
    await tracer.forceFlush();
    const [big] = store.spans as [Span];
    expect(Object.keys(big.attributes)).toHaveLength(601);
    expect(big.attributes['task']).toBe('last one set');
    expect(big.attributes['gen_ai.prompt.0.content']).toBe('message 0');
  });

  it('marks a failing operation ERROR and re-throws', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const ctx = { rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer };
    await expect(
      withRolloutContext(ctx, () =>
        operation('boom', () => {
          throw new Error('kaput');
        }),
      ),
    ).rejects.toThrow('kaput');
    await tracer.forceFlush();
    expect(store.spans[0]?.status).toEqual({ statusCode: 'ERROR', description: 'kaput' });
    expect(store.spans[0]?.events[0]?.name).toBe('exception');
  });

  it('keeps concurrent rollouts apart, including framework spans from the OTel tracer', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const otel = tracer.getTracer('framework');
    const run = (id: string, delay: number): Promise<void> =>
      withRolloutContext({ rolloutId: `ro-${id}`, attemptId: `at-${id}`, store: store.asStore(), tracer }, async () => {
        for (let i = 0; i < 5; i += 1) {
          await new Promise((r) => setTimeout(r, delay));
          otel.startSpan(`llm-${id}`).end();
          emitMessage(`msg-${id}`);
        }
      });
    await Promise.all([run('a', 1), run('b', 2), run('c', 0)]);
    await tracer.forceFlush();
    expect(store.spans).toHaveLength(30);
    for (const span of store.spans) {
      const id = span.rolloutId.slice(3);
      expect(span.attemptId).toBe(`at-${id}`);
      expect(span.name === `llm-${id}` || span.attributes['agentlightning.message.body'] === `msg-${id}`).toBe(true);
    }
    for (const id of ['a', 'b', 'c']) {
      expect(store.spans.filter((s) => s.rolloutId === `ro-${id}`).map((s) => s.sequenceId)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
      ]);
    }
  });

  it('counts spans that end outside any rollout as unowned and does not export them', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    tracer.getTracer().startSpan('stray').end();
    await tracer.forceFlush();
    expect(store.spans).toHaveLength(0);
    expect(tracer.stats().unowned).toBe(1);
  });

  it('an unowned-span handler gives an owner to a span started outside any rollout (and its children)', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const seen: string[] = [];
    const previous = setUnownedSpanHandler((span) => {
      seen.push(span.name);
      return span.name === 'llm' ? { rolloutId: 'ro-u', attemptId: 'at-u', store: store.asStore(), tracer } : undefined;
    });
    try {
      tracer.getTracer().startActiveSpan('llm', (span) => {
        tracer.getTracer().startSpan('child').end();
        span.end();
      });
      tracer.getTracer().startSpan('other').end();
      await tracer.forceFlush();
    } finally {
      setUnownedSpanHandler(previous);
    }
    expect(seen).toEqual(['llm', 'other']);
    expect(store.spans.map((s) => [s.name, s.rolloutId])).toEqual([
      ['child', 'ro-u'],
      ['llm', 'ro-u'],
    ]);
    expect(tracer.stats().unowned).toBe(1);
  });

  it('a span started under a rollout span but outside the async context inherits the rollout', async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const otel = tracer.getTracer();
    let parent: ReturnType<typeof otel.startSpan> | undefined;
    withRolloutContext({ rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer }, () => {
      parent = otel.startSpan('parent');
    });
    expect(getRolloutContext()).toBeUndefined();
    const child = otel.startSpan('child', {}, trace.setSpan(context.active(), parent!));
    child.end();
    parent!.end();
    await tracer.forceFlush();
    expect(store.spans.map((s) => [s.name, s.rolloutId])).toEqual([
      ['child', 'ro-1'],
      ['parent', 'ro-1'],
    ]);
  });

  it('a reward emitted right after a framework LLM span always sorts after it (sub-millisecond times)', async () => {
    const store = new RecordingStore();
    const tracer = newTracer({ maxQueueSize: 10_000 });
    const otel = tracer.getTracer('framework');
    withRolloutContext({ rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer }, () => {
      for (let i = 0; i < 200; i += 1) {
        otel
          .startSpan('openai.chat.completion', {
            attributes: {
              'gen_ai.response.id': `r${i}`,
              'gen_ai.prompt.0.content': 'q',
              'gen_ai.completion.0.content': 'a',
            },
          })
          .end();
        emitReward(i);
      }
    });
    await tracer.forceFlush();
    const rewards = new TraceToTransitions({ finalRewardOnLastCall: false })
      .transitions(store.spans)
      .map((t) => t.reward);
    expect(rewards).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('register() makes the first tracer global and reports when another one already is', () => {
    const first = newTracer();
    const second = newTracer();
    expect(first.register()).toBe(true);
    expect(second.register()).toBe(false);
    expect(first.register()).toBe(true);
  });

  it('withRolloutContext refuses missing ids', () => {
    const store = new RecordingStore();
    expect(() => withRolloutContext({ rolloutId: '', attemptId: 'a', store: store.asStore() }, () => 1)).toThrow(
      UserError,
    );
  });
});
