import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it } from 'vitest';
import { configureObserve, flushObserve, observeStats, shutdownObserve } from '../index';
import { UnscopedLimiter, type FoldedMinute } from './unscoped-limiter';

function llmCall(prompt: string): void {
  getAglTracer()
    .getTracer('test')
    .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttribute('gen_ai.prompt.0.content', prompt);
      span.end();
    });
}

const T = Date.UTC(2026, 11, 7, 2, 0, 0);
const logger = { warn: () => undefined };

describe('UnscopedLimiter', () => {
  it('lets perSecond calls through each second and hands over each minute of the rest once it is over', () => {
    let now = T + 500;
    const minutes: FoldedMinute[] = [];
    const limiter = new UnscopedLimiter({ perSecond: 2, now: () => now, emit: (m) => minutes.push(m) });
    expect([1, 2, 3, 4].map(() => limiter.take())).toEqual([true, true, false, false]);
    now += 1000;
    expect([1, 2, 3].map(() => limiter.take())).toEqual([true, true, false]);
    expect(minutes).toEqual([]);
    now = T + 60_000 + 10;
    expect(limiter.take()).toBe(true);
    expect(minutes).toEqual([{ startMs: T, calls: 3 }]);
    expect(limiter.folded).toBe(3);
    limiter.take();
    limiter.take();
    limiter.drain();
    expect(minutes).toEqual([
      { startMs: T, calls: 3 },
      { startMs: T + 60_000, calls: 1 },
    ]);
  });

  it('refuses a negative or non-finite bound, naming the option', () => {
    expect(() => new UnscopedLimiter({ perSecond: -1, emit: () => undefined })).toThrow(/unscopedPerSecond/);
    expect(() => new UnscopedLimiter({ perSecond: Number.NaN, emit: () => undefined })).toThrow(/unscopedPerSecond/);
  });
});

describe('unscoped LLM calls are rate-bound', () => {
  afterEach(() => shutdownObserve(500));

  it('5,000 calls outside any rollout in one second make 50 one-call rollouts and one per-minute rollout', async () => {
    const store = new MemoryStore();
    let now = T + 100;
    configureObserve({ store, logger, agentName: 'svc', unscopedClock: () => now, exitFlushTimeoutMs: 0 });
    for (let i = 0; i < 5000; i += 1) llmCall(`loose ${i}`);
    await flushObserve();
    expect(observeStats()).toMatchObject({ unscoped: 5000, unscopedFolded: 4950, recorded: 50 });
    expect((await store.queryRollouts()).items).toHaveLength(50);
    // The minute is over: the next call records the folded count as one rollout.
    now = T + 61_000;
    llmCall('next minute');
    await flushObserve();
    const rollouts = (await store.queryRollouts({ limit: -1 })).items;
    expect(rollouts).toHaveLength(52);
    const folded = rollouts.filter((r) => (r.metadata as Record<string, unknown>).folded_calls !== undefined);
    expect(folded).toHaveLength(1);
    expect(folded[0]).toMatchObject({
      status: 'succeeded',
      mode: null,
      startTime: T / 1000,
      metadata: { source: 'unscoped', folded_calls: 4950, agent_name: 'svc' },
    });
  });

  it('takes the bound from unscopedPerSecond or AGL_UNSCOPED_PER_SECOND, and records a partial minute on shutdown', async () => {
    const store = new MemoryStore();
    process.env.AGL_UNSCOPED_PER_SECOND = '1';
    try {
      configureObserve({ store, logger, unscopedClock: () => T, exitFlushTimeoutMs: 0 });
    } finally {
      delete process.env.AGL_UNSCOPED_PER_SECOND;
    }
    llmCall('a');
    llmCall('b');
    llmCall('c');
    await shutdownObserve(2000);
    const rollouts = (await store.queryRollouts({ limit: -1 })).items;
    expect(rollouts.map((r) => (r.metadata as Record<string, unknown>).folded_calls ?? null).sort()).toEqual([2, null]);
  });
});
