import { context, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SpanInput } from '../schema/index';
import type { LightningStore } from '../store/index';
import { emitReward } from './emitters';
import { setUnownedSpanHandler } from './lightning-span-processor';
import { llmRequestHeaders } from './llm-request-headers';
import { operation } from './operation';
import {
  getRolloutContext,
  isRecordingOff,
  setProcessRolloutContext,
  withoutRecording,
  withRolloutContext,
} from './rollout-context';
import { traceOpenAiChat } from './trace-openai-chat';
import { newTracer, shutdownTracers } from './__fixtures__/recording-store';

afterEach(async () => {
  setUnownedSpanHandler(undefined);
  setProcessRolloutContext(undefined);
  await shutdownTracers();
});

describe('withoutRecording', () => {
  it('turns recording off inside a rollout and a process agent: no context, no span, emitters only run', async () => {
    const tracer = newTracer();
    const got: SpanInput[] = [];
    const ctx = {
      rolloutId: 'ro-1',
      attemptId: 'at-1',
      store: {} as LightningStore,
      tracer,
      spanSink: (spans: SpanInput[]) => got.push(...spans),
    };
    setProcessRolloutContext(ctx);
    const unowned = vi.fn(() => ctx);
    setUnownedSpanHandler(unowned);
    const result = await withRolloutContext(ctx, () =>
      withoutRecording(async () => {
        expect(isRecordingOff()).toBe(true);
        expect(getRolloutContext()).toBeUndefined();
        emitReward(0.5);
        // Under an active span, in a process agent: still nothing to propagate to an LLM server.
        const active = tracer.getTracer('framework').startSpan('framework.step');
        expect(llmRequestHeaders(trace.setSpan(context.active(), active))).toEqual({});
        active.end();
        const answer = await traceOpenAiChat({ model: 'm', messages: [] }, async () => ({ choices: [] }));
        // A framework's own span (any tracer of the provider) is not owned and not offered as an unscoped call.
        tracer.getTracer('framework').startSpan('openai.chat.completion').end();
        return operation('step', async (op) => {
          op.setOutput('x');
          return answer;
        });
      }),
    );
    expect(result).toEqual({ choices: [] });
    await tracer.forceFlush();
    expect(got).toEqual([]);
    expect(unowned).not.toHaveBeenCalled();
    expect(tracer.stats()).toMatchObject({ exported: 0, unowned: 2 });
    // Outside the scope, the same rollout records again.
    withRolloutContext(ctx, () => emitReward(1));
    expect(withRolloutContext(ctx, () => llmRequestHeaders())).toEqual({
      'x-rollout-id': 'ro-1',
      'x-attempt-id': 'at-1',
    });
    await tracer.forceFlush();
    expect(got).toHaveLength(1);
    expect(isRecordingOff()).toBe(false);
  });
});
