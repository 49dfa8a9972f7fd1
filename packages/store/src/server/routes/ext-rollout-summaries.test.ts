import { describe, expect, it } from 'vitest';
import { FakeClock } from '@agl/testing';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '../../memory/memory-store';
import { ATTR_FEEDBACK_COMMENT, ATTR_REWARD_SOURCE } from '@agl/core/semconv';
import { RolloutSummaries, rewardStats } from './ext-rollout-summaries';

/** `store` with its calls counted by method; `batch: false` hides `querySpansOfAttempts` (as `StoreClient` lacks it). */
function counting(store: LightningStore, options: { batch?: boolean } = {}) {
  const calls = new Map<PropertyKey, number>();
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'querySpansOfAttempts' && options.batch === false) return undefined;
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const count = (key: string): number => calls.get(key) ?? 0;
  return { store: proxy, count, spanQueries: () => count('querySpans') + count('querySpansOfAttempts') };
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

/**
 * A store with `n` finished rollouts of every kind a summary tells apart: agent rewards, feedback over them, a judge
 * score, none, a retried rollout whose old attempt has a reward, and queued rollouts without an attempt.
 */
async function mixedStore(n: number): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.enqueueRollouts(Array.from({ length: n }, (_, i) => ({ input: i })));
  const claimed = await store.dequeueRollouts({ limit: n });
  const spans = claimed.flatMap(({ rolloutId, attempt }, i) => {
    const reward = (spanId: string, value: number, sequenceId: number, extra: Record<string, string> = {}) => ({
      ...rewardSpan(rolloutId, attempt.attemptId, value),
      spanId,
      sequenceId,
      attributes: { ...rewardSpan(rolloutId, attempt.attemptId, value).attributes, ...extra },
    });
    const out = [{ ...rewardSpan(rolloutId, attempt.attemptId, 0), name: 'llm.call', spanId: 'llm', sequenceId: 1 }];
    if (i % 5 !== 4) out.push(reward('agent', (i % 10) / 10, 3));
    if (i % 3 === 0)
      out.push(reward('feedback', 1, 5, { [ATTR_REWARD_SOURCE]: 'feedback', [ATTR_FEEDBACK_COMMENT]: 'ok' }));
    if (i % 5 === 4 && i % 2 === 0) out.push(reward('judge', 0.25, 4, { [ATTR_REWARD_SOURCE]: 'judge' }));
    if (i % 7 === 0) out.push(reward('feedback-early', 0, 2, { [ATTR_REWARD_SOURCE]: 'feedback' })); // out of order
    return out;
  });
  await store.addSpans(spans);
  for (const { rolloutId } of claimed.filter((_, i) => i % 11 === 0)) await store.startAttempt(rolloutId); // a retry
  for (const { rolloutId } of claimed) await store.updateAttempt(rolloutId, 'latest', { status: 'succeeded' });
  await store.enqueueRollouts([{ input: 'queued-1' }, { input: 'queued-2' }]);
  return store;
}

describe('RolloutSummaries over many rollouts', () => {
  it('reads reward spans in one querySpansOfAttempts call per 1,000 rollouts, never the attempts, and gives the same summaries as one querySpans per rollout', async () => {
    const memory = await mixedStore(1100);
    const { items } = await memory.queryRollouts({ limit: -1 });
    const batched = counting(memory);
    const perRollout = counting(memory, { batch: false });
    const viaBatch = await new RolloutSummaries({ store: batched.store }).summarizeAll(items);
    const viaQueries = await new RolloutSummaries({ store: perRollout.store }).summarizeAll(items);

    expect(batched.count('querySpansOfAttempts')).toBe(2);
    expect(batched.count('querySpans') + batched.count('queryAttempts')).toBe(0);
    expect(perRollout.count('querySpans')).toBe(1100);
    expect(viaBatch).toEqual(viaQueries);
    // The attempt count is what queryAttempts counts; the kinds of reward all occur.
    for (const s of viaBatch.filter((_, i) => i % 97 === 0 || i >= 1099))
      expect(s.attemptCount).toBe((await memory.queryAttempts({ rolloutId: s.rollout.rolloutId, limit: 0 })).total);
    expect(new Set(viaBatch.map((s) => s.attemptCount))).toEqual(new Set([0, 1, 2]));
    expect(new Set(viaBatch.map((s) => s.finalReward))).toEqual(
      new Set([null, 0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 1, 0.25]),
    );
    expect(viaBatch[0]).toMatchObject({ attemptCount: 2, finalReward: null, feedback: [] }); // its retry has no spans
    expect(viaBatch[3]?.feedback).toMatchObject([{ reward: 1, comment: 'ok', sequenceId: 5 }]);
    expect(viaBatch[21]?.feedback.map((f) => f.sequenceId)).toEqual([2, 5]);
    expect(viaBatch[21]?.finalReward).toBe(1);
    await memory.close();
  });
});

describe('rewardStats', () => {
  it('ignores nulls and counts success at the threshold', () => {
    expect(rewardStats([0, 0.5, 1, null], 0.5)).toEqual({ count: 3, mean: 0.5, min: 0, max: 1, successRate: 2 / 3 });
    expect(rewardStats([null], 1)).toEqual({ count: 0, mean: null, min: null, max: null, successRate: null });
  });
});
