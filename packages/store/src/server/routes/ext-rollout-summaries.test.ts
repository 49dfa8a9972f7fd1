import { describe, expect, it } from 'vitest';
import { FakeClock } from '@agl/testing';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '../../memory/memory-store';
import { RolloutSummaries, rewardStats } from './ext-rollout-summaries';

function counting(store: LightningStore): { store: LightningStore; spanQueries: () => number } {
  let calls = 0;
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key === 'querySpans') calls += 1;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: proxy, spanQueries: () => calls };
}

const rewardSpan = (rolloutId: string, attemptId: string, value: number) => ({
  rolloutId,
  attemptId,
  sequenceId: 9,
  traceId: 't',
  spanId: `reward-${value}`,
  parentId: null,
  name: 'agentlightning.annotation',
  startTime: 1,
  endTime: 1,
  attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': value },
});

describe('RolloutSummaries', () => {
  it('sees a reward that arrives after the rollout finished, then caches once the rollout settled', async () => {
    const clock = new FakeClock();
    const memory = new MemoryStore({ clock });
    const { store, spanQueries } = counting(memory);
    const summaries = new RolloutSummaries({ store, clock, settleSeconds: 30 });
    const r = await memory.startRollout({ input: 1 });
    await memory.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    const finished = (await memory.getRolloutById(r.rolloutId))!;
    expect((await summaries.summarize(finished)).finalReward).toBeNull();

    await memory.addSpan(rewardSpan(r.rolloutId, r.attempt.attemptId, 0.7)); // a late exporter flush
    clock.advance(10);
    expect((await summaries.summarize(finished)).finalReward).toBe(0.7);

    clock.advance(30);
    const before = spanQueries();
    expect((await summaries.summarize(finished)).finalReward).toBe(0.7);
    expect((await summaries.summarize(finished)).finalReward).toBe(0.7);
    expect(spanQueries() - before).toBe(1); // computed once after settling, then served from the cache
    await memory.close();
  });

  it('recomputes a cached summary after invalidate, and after maxAgeSeconds for writes it was not told of', async () => {
    const clock = new FakeClock();
    const memory = new MemoryStore({ clock });
    const summaries = new RolloutSummaries({ store: memory, clock, settleSeconds: 30, maxAgeSeconds: 60 });
    const r = await memory.startRollout({ input: 1 });
    await memory.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    const finished = (await memory.getRolloutById(r.rolloutId))!;
    clock.advance(100);
    expect((await summaries.summarize(finished)).finalReward).toBeNull();
    await memory.addSpan(rewardSpan(r.rolloutId, r.attempt.attemptId, 0.3));
    expect((await summaries.summarize(finished)).finalReward).toBeNull(); // cached, not told
    summaries.invalidate(r.rolloutId);
    expect((await summaries.summarize(finished)).finalReward).toBe(0.3);
    await memory.addSpan({ ...rewardSpan(r.rolloutId, r.attempt.attemptId, 0.9), sequenceId: 10 });
    // A write that lands while a summary is being computed keeps that summary out of the cache.
    const pending = summaries.summarize(finished);
    summaries.invalidate(r.rolloutId);
    await pending;
    expect((await summaries.summarize(finished)).finalReward).toBe(0.9);
    await memory.addSpan({ ...rewardSpan(r.rolloutId, r.attempt.attemptId, 0.1), spanId: 'x', sequenceId: 11 });
    clock.advance(61);
    expect((await summaries.summarize(finished)).finalReward).toBe(0.1);
    await memory.close();
  });

  it('never caches a running rollout', async () => {
    const memory = new MemoryStore();
    const { store, spanQueries } = counting(memory);
    const summaries = new RolloutSummaries({ store });
    const r = await memory.startRollout({ input: 1 });
    await summaries.summarize(r);
    await summaries.summarize(r);
    expect(spanQueries()).toBe(2);
    await memory.close();
  });
});

describe('rewardStats', () => {
  it('ignores nulls and counts success at the threshold', () => {
    expect(rewardStats([0, 0.5, 1, null], 0.5)).toEqual({ count: 3, mean: 0.5, min: 0, max: 1, successRate: 2 / 3 });
    expect(rewardStats([null], 1)).toEqual({ count: 0, mean: null, min: null, max: null, successRate: null });
  });
});
