import { afterEach, describe, expect, it } from 'vitest';
import type { SpanInput } from '../schema/index';
import type { LightningStore } from '../store/index';
import { deferSpanWork } from './deferred-span-work';
import { withRolloutContext } from './rollout-context';
import { newTracer, shutdownTracers } from './__fixtures__/recording-store';

afterEach(shutdownTracers);

describe('deferSpanWork', () => {
  it("runs off the caller's path, and before a tracer hands spans over, so a span ended late is still handed over first", async () => {
    const tracer = newTracer();
    const got: string[] = [];
    const ctx = {
      rolloutId: 'ro-deferred',
      attemptId: 'at',
      store: {} as LightningStore,
      tracer,
      spanSink: (spans: SpanInput[]) => got.push(...spans.map((s) => s.name)),
    };
    const span = withRolloutContext(ctx, () => tracer.getTracer('test').startSpan('call'));
    const endedAt = performance.now();
    deferSpanWork(() => {
      span.setAttribute('answer', 42);
      span.end(endedAt);
    });
    expect(got, 'nothing ran on the caller path').toEqual([]);
    const order: string[] = [];
    tracer.afterSpansHanded(() => order.push(`handed: ${got.join(',')}`));
    expect(order).toEqual(['handed: call']);
  });

  it('runs at the next turn of the event loop on its own', async () => {
    let ran = false;
    deferSpanWork(() => (ran = true));
    expect(ran).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toBe(true);
  });
});
