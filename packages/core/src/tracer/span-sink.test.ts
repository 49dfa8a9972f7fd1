import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toWire, type SpanInput } from '../schema/index';
import { ATTR_MESSAGE_BODY } from '../semconv';
import type { LightningStore } from '../store/index';
import type { AglTracer } from './agl-tracer';
import { emitMessage } from './emitters';
import { withRolloutContext, type RolloutContext } from './rollout-context';
import { spanFromOpenTelemetry, type WireSpan } from './span-conversion';
import { newTracer, RecordingStore, shutdownTracers } from './__fixtures__/recording-store';

afterEach(shutdownTracers);

/** A tracer, and a context whose spans go to a sink; the store fails the test if the processor calls it. */
function sinkContext(
  rolloutId: string,
  sink: (spans: SpanInput[]) => void,
): { tracer: AglTracer; ctx: RolloutContext } {
  const tracer = newTracer();
  const refuse = (): never => {
    throw new Error('the processor called the store of a context that has a span sink');
  };
  const store = { getNextSpanSequenceIds: refuse, addSpans: refuse } as unknown as LightningStore;
  return { tracer, ctx: { rolloutId, attemptId: `${rolloutId}-at`, store, tracer, spanSink: sink } };
}

describe('a rollout context with a spanSink', () => {
  it('gets its spans converted, in end order, on the next turn of the event loop, without a store call', async () => {
    const got: SpanInput[][] = [];
    const { tracer, ctx } = sinkContext('ro-sink', (spans) => got.push(spans));
    withRolloutContext(ctx, () => {
      emitMessage('first');
      emitMessage('second');
    });
    // Not on the caller's path: nothing is handed over while the code that ended the spans still runs.
    expect(got).toEqual([]);
    expect(tracer.stats().queued).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(got).toHaveLength(1);
    expect(got[0]!.map((s) => [s.rolloutId, s.attemptId, s.sequenceId, s.attributes?.[ATTR_MESSAGE_BODY]])).toEqual([
      ['ro-sink', 'ro-sink-at', 0, 'first'],
      ['ro-sink', 'ro-sink-at', 0, 'second'],
    ]);
    expect(got[0]![0]!.startTime).toBeGreaterThan(0);
    expect(tracer.stats()).toMatchObject({ queued: 0, exported: 2, failed: 0 });
  });

  it('whenExported and forceFlush hand waiting spans over at once', async () => {
    const got: string[] = [];
    const { tracer, ctx } = sinkContext('ro-flush', (spans) => got.push(...spans.map((s) => s.name)));
    withRolloutContext(ctx, () => emitMessage('a'));
    await tracer.whenExported();
    expect(got).toEqual(['agentlightning.message']);
    withRolloutContext(ctx, () => emitMessage('b'));
    await tracer.forceFlush();
    expect(got).toHaveLength(2);
  });

  it('a sink that throws loses only its own spans, counted as failed and reported', async () => {
    const warn = vi.fn();
    const tracer = newTracer({ logger: { warn } });
    const good: string[] = [];
    const base = { store: {} as LightningStore, tracer };
    withRolloutContext(
      {
        ...base,
        rolloutId: 'ro-bad',
        attemptId: 'at',
        spanSink: () => {
          throw new Error('full');
        },
      },
      () => emitMessage('lost'),
    );
    withRolloutContext(
      { ...base, rolloutId: 'ro-good', attemptId: 'at', spanSink: (s) => good.push(...s.map((x) => x.rolloutId)) },
      () => emitMessage('kept'),
    );
    await tracer.whenExported();
    expect(good).toEqual(['ro-good']);
    expect(tracer.stats()).toMatchObject({ exported: 1, failed: 1 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('could not export 1 span(s) to the store: full'));
  });
});

describe('a rollout context with a wireSpanSink', () => {
  it('gets each span in wire form built straight from the OpenTelemetry span: equal to toWire of the API span', async () => {
    const ended: ReadableSpan[] = [];
    const capture: SpanProcessor = {
      onStart: () => undefined,
      onEnd: (span) => void ended.push(span),
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    };
    const tracer = newTracer({ spanProcessors: [capture] });
    const got: WireSpan[] = [];
    const refuse = (): never => {
      throw new Error('the processor used the store or the API-form sink of a context that has a wire span sink');
    };
    const ctx: RolloutContext = {
      rolloutId: 'ro-wire',
      attemptId: 'at-wire',
      store: { getNextSpanSequenceIds: refuse, addSpans: refuse } as unknown as LightningStore,
      tracer,
      spanSink: refuse,
      wireSpanSink: (spans) => got.push(...spans),
    };
    withRolloutContext(ctx, () => {
      const t = tracer.getTracer('test');
      t.startActiveSpan('parent', (parent) => {
        const child = t.startSpan('child', {
          attributes: { 'gen_ai.prompt.0.content': 'hi', count: 3, tags: ['a', 'b'] },
          links: [{ context: parent.spanContext(), attributes: { why: 'retry' } }],
        });
        child.addEvent('chunk', { index: 1 });
        child.setStatus({ code: SpanStatusCode.ERROR, message: 'bad gateway' });
        child.end();
        parent.end();
      });
    });
    expect(got, 'handed over on the next turn, not on the caller path').toEqual([]);
    await tracer.whenExported();
    expect(got.map((s) => [s.name, s.rollout_id, s.attempt_id, s.sequence_id])).toEqual([
      ['child', 'ro-wire', 'at-wire', 0],
      ['parent', 'ro-wire', 'at-wire', 0],
    ]);
    expect(got[0]!.parent_id).toBe(got[1]!.span_id);
    expect(got[0]!.start_time).toBeGreaterThan(0);
    for (const [i, span] of ended.entries()) {
      const owner = { rolloutId: 'ro-wire', attemptId: 'at-wire', sequenceId: 0 };
      const times = { startTime: got[i]!.start_time as number, endTime: got[i]!.end_time };
      expect(got[i]).toEqual(toWire('span', spanFromOpenTelemetry(span, owner, times)));
    }
  });

  it('afterSpansHanded hands waiting sink spans over and calls back at once; with store spans queued, after export', async () => {
    const got: string[] = [];
    const { tracer, ctx } = sinkContext('ro-after', (spans) => got.push(...spans.map((s) => s.name)));
    withRolloutContext(ctx, () => emitMessage('a'));
    const calls: string[] = [];
    tracer.afterSpansHanded(() => calls.push(`sink spans handed: ${got.length}`));
    expect(calls, 'synchronous when only sink spans waited').toEqual(['sink spans handed: 1']);

    const store = new RecordingStore();
    withRolloutContext({ rolloutId: 'ro-store', attemptId: 'at', store: store.asStore(), tracer }, () =>
      emitMessage('b'),
    );
    tracer.afterSpansHanded(() => calls.push(`store spans: ${store.spans.length}`));
    expect(calls).toHaveLength(1);
    await tracer.forceFlush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['sink spans handed: 1', 'store spans: 1']);
  });
});
