import { getRewardValue } from '@agl/core/transitions';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it } from 'vitest';
import { litAgent } from '../agent/lit-agent';
import { emitReward, getAglTracer } from '@agl/core/tracer';
import { Runner } from './runner';
import type { RunnerLogger } from './hooks';

const quiet: RunnerLogger = { warn: () => undefined };

async function drain(store: MemoryStore, runner: Runner, ids: string[]): Promise<void> {
  const running = runner.run();
  await store.waitForRollouts(ids, { timeoutSeconds: 20 });
  runner.stop();
  await running;
}

/** Counts the store's `dequeueRollout` calls from now on. */
function countDequeues(store: MemoryStore): () => number {
  const dequeue = store.dequeueRollout.bind(store);
  let calls = 0;
  store.dequeueRollout = (options) => {
    calls += 1;
    return dequeue(options);
  };
  return () => calls;
}

describe('Runner (in-process workers)', () => {
  let store: MemoryStore;
  afterEach(async () => store?.close());

  it("idle workers sleep on the store's enqueue signal instead of polling dequeue, and wake at once for new work", async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const dequeues = countDequeues(store);
    const runner = new Runner({ store, agent: async () => 1, nWorkers: 4, pollIntervalSeconds: 0.25, logger: quiet });
    const running = runner.run();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    // Polling every 250 ms would be ~20 dequeues; waiting up to ten intervals (2.5 s) per empty dequeue, at most ~8.
    expect(dequeues()).toBeLessThanOrEqual(8);
    const started = Date.now();
    const r = await store.enqueueRollout({ input: 1 });
    expect((await store.waitForRollouts([r.rolloutId], { timeoutSeconds: 10 })).map((x) => x.status)).toEqual([
      'succeeded',
    ]);
    expect(Date.now() - started).toBeLessThan(2000); // a sleeping worker would have waited up to 2.5 s
    runner.stop();
    await running;
  });

  it('many idle workers cost one empty dequeue per wait, and all of them start when a batch is queued', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const dequeues = countDequeues(store);
    let concurrent = 0;
    let peak = 0;
    const agent = async (): Promise<number> => {
      concurrent += 1;
      peak = Math.max(peak, concurrent);
      await new Promise((resolve) => setTimeout(resolve, 400));
      concurrent -= 1;
      return 1;
    };
    const runner = new Runner({ store, agent, nWorkers: 20, pollIntervalSeconds: 0.05, logger: quiet });
    const running = runner.run();
    await new Promise((resolve) => setTimeout(resolve, 1300));
    // Waits of ten poll intervals (0.5 s): one dequeue per timed-out wait, not one per worker (20 workers polling
    // every 50 ms would be ~520; one empty dequeue per worker per wait, ~60).
    expect(dequeues()).toBeLessThanOrEqual(4);
    const rollouts = await store.enqueueRollouts(Array.from({ length: 20 }, (_, i) => ({ input: i })));
    const finished = await store.waitForRollouts(
      rollouts.map((r) => r.rolloutId),
      { timeoutSeconds: 10 },
    );
    expect(finished.map((r) => r.status)).toEqual(Array(20).fill('succeeded'));
    expect(peak).toBeGreaterThanOrEqual(15); // the batch ran side by side, not one worker after another
    runner.stop();
    await running;
  });

  it('against a store without waitForQueue, idle workers poll every interval and pick up new work', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    let dequeues = 0;
    const polling = new Proxy(store, {
      get(target, prop) {
        if (prop === 'waitForQueue') return undefined;
        const value = Reflect.get(target, prop, target) as unknown;
        if (prop === 'dequeueRollout') dequeues += 1;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const runner = new Runner({
      store: polling,
      agent: async () => 1,
      nWorkers: 2,
      pollIntervalSeconds: 0.05,
      logger: quiet,
    });
    const running = runner.run();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(dequeues).toBeGreaterThanOrEqual(10); // 2 workers × ~10 polls each
    const r = await store.enqueueRollout({ input: 1 });
    expect((await store.waitForRollouts([r.rolloutId], { timeoutSeconds: 5 })).map((x) => x.status)).toEqual([
      'succeeded',
    ]);
    runner.stop();
    await running;
  });

  it('runs a function agent, turns a numeric return into the final reward span, and marks the attempt succeeded', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const seen: unknown[] = [];
    const agent = async (
      task: unknown,
      _resources: unknown,
      ctx: { workerId: string; mode: unknown },
    ): Promise<number> => {
      seen.push([task, ctx.workerId, ctx.mode]);
      return 0.75;
    };
    const r = await store.enqueueRollout({ input: { q: 1 }, mode: 'train' });
    await drain(store, new Runner({ store, agent: agent as never, pollIntervalSeconds: 0.01, logger: quiet }), [
      r.rolloutId,
    ]);
    const done = await store.getRolloutById(r.rolloutId);
    expect(done?.status).toBe('succeeded');
    const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
    expect(spans.map(getRewardValue).filter((v) => v !== null)).toEqual([0.75]);
    expect(seen).toEqual([[{ q: 1 }, 'Worker-1', 'train']]);
    const worker = await store.getWorkerById('Worker-1');
    expect(worker).not.toBeNull();
  });

  it('a rollout whose agent throws keeps every span it made: those it left open are closed with an error', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const agent = litAgent({
      rollout: async () => {
        const tracer = getAglTracer().getTracer('test');
        tracer.startSpan('agent-left-open'); // a framework's agent span the throw never ended
        tracer.startSpan('finished-step').end();
        throw new Error('tool exploded');
      },
    });
    const r = await store.enqueueRollout({ input: 'x' });
    await drain(store, new Runner({ store, agent, nWorkers: 1, pollIntervalSeconds: 0.01, logger: quiet }), [
      r.rolloutId,
    ]);
    const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
    expect(spans.find((s) => s.name === 'finished-step')?.status.statusCode).toBe('UNSET');
    expect(spans.find((s) => s.name === 'agent-left-open')?.status).toEqual({
      statusCode: 'ERROR',
      description: 'the rollout failed: tool exploded',
    });
  });

  it('records a throw as an exception span, fails the attempt, and retries per the rollout config', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    let calls = 0;
    const agent = litAgent({
      rollout: async () => {
        calls += 1;
        throw new Error(`boom ${calls}`);
      },
    });
    const r = await store.enqueueRollout({ input: 'x', config: { maxAttempts: 3, retryCondition: ['failed'] } });
    await drain(store, new Runner({ store, agent, nWorkers: 2, pollIntervalSeconds: 0.01, logger: quiet }), [
      r.rolloutId,
    ]);
    expect((await store.getRolloutById(r.rolloutId))?.status).toBe('failed');
    const attempts = (await store.queryAttempts({ rolloutId: r.rolloutId })).items;
    expect(attempts.map((a) => a.status)).toEqual(['failed', 'failed', 'failed']);
    const spans = (await store.querySpans({ rolloutId: r.rolloutId })).items;
    const exceptions = spans.filter((s) => s.name === 'agentlightning.exception');
    expect(exceptions).toHaveLength(3);
    expect(exceptions.map((s) => s.attributes['exception.message']).sort()).toEqual(['boom 1', 'boom 2', 'boom 3']);
  });

  it('calls hooks in order, dispatches train/val variants, and uses the reward hook only when no reward exists', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const order: string[] = [];
    const agent = litAgent({
      rollout: async () => undefined,
      trainingRollout: async (task) => {
        order.push(`train:${String(task)}`);
        emitReward(0.1);
      },
      validationRollout: async (task) => {
        order.push(`val:${String(task)}`);
        return 'not-a-reward' as never;
      },
    });
    const rewardCalls: unknown[] = [];
    const a = await store.enqueueRollout({ input: 'a', mode: 'train' });
    const b = await store.enqueueRollout({ input: 'b', mode: 'val' });
    const runner = new Runner({
      store,
      agent,
      pollIntervalSeconds: 0.01,
      logger: quiet,
      reward: (task, result, spans) => {
        rewardCalls.push([task, result, spans.length]);
        return 0.9;
      },
      hooks: {
        onRolloutStart: ({ rollout }) => void order.push(`start:${String(rollout.input)}`),
        onTraceStart: () => void order.push('traceStart'),
        onTraceEnd: () => void order.push('traceEnd'),
        onRolloutEnd: ({ status }) => void order.push(`end:${status}`),
      },
    });
    await drain(store, runner, [a.rolloutId, b.rolloutId]);
    expect(order).toEqual([
      'start:a',
      'traceStart',
      'train:a',
      'traceEnd',
      'end:succeeded',
      'start:b',
      'traceStart',
      'val:b',
      'traceEnd',
      'end:succeeded',
    ]);
    expect(rewardCalls).toEqual([['b', 'not-a-reward', 0]]);
    const rewardsOf = async (id: string): Promise<number[]> =>
      (await store.querySpans({ rolloutId: id })).items.map(getRewardValue).filter((v): v is number => v !== null);
    expect(await rewardsOf(a.rolloutId)).toEqual([0.1]);
    expect(await rewardsOf(b.rolloutId)).toEqual([0.9]);
  });

  it('stops after maxRollouts and hands the latest resources to the agent', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    await store.addResources({ llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:1/v1', model: 'm' } });
    const models: string[] = [];
    await store.enqueueRollouts([{ input: 1 }, { input: 2 }, { input: 3 }]);
    const runner = new Runner({
      store,
      agent: async (_task, resources) => {
        const llm = resources.llm;
        models.push(llm?.resourceType === 'llm' ? llm.model : 'none');
      },
      maxRollouts: 2,
      pollIntervalSeconds: 0.01,
      logger: quiet,
    });
    const stats = await runner.run();
    expect(stats).toEqual({ started: 2, succeeded: 2, failed: 0 });
    expect(models).toEqual(['m', 'm']);
    expect((await store.queryRollouts({ statusIn: ['queuing'] })).total).toBe(1);
  });

  it('runs 40 workers on one signal without a MaxListenersExceededWarning', async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const ids = (await store.enqueueRollouts(Array.from({ length: 60 }, (_, i) => ({ input: i })))).map(
        (r) => r.rolloutId,
      );
      const agent = async () => {
        await new Promise((r) => setTimeout(r, 5));
        return 1;
      };
      await drain(store, new Runner({ store, agent, nWorkers: 40, pollIntervalSeconds: 0.01, logger: quiet }), ids);
      expect((await store.queryRollouts({ statusIn: ['succeeded'] })).total).toBe(60);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it("never runs a rollout twice at once, even when the store's timeout fires before the runner's", async () => {
    store = new MemoryStore({ scanDebounceSeconds: 0 });
    const r = await store.enqueueRollout({
      input: 'x',
      config: { timeoutSeconds: 0.3, maxAttempts: 3, retryCondition: ['timeout'] },
    });
    const active = new Set<string>();
    const overlaps: string[] = [];
    let calls = 0;
    const agent = async (
      _task: unknown,
      _resources: unknown,
      ctx: { rolloutId: string; attemptId: string; signal: AbortSignal },
    ) => {
      if (active.has(ctx.rolloutId)) overlaps.push(ctx.attemptId);
      active.add(ctx.rolloutId);
      calls += 1;
      try {
        if (calls === 1) {
          // Block the event loop past timeoutSeconds: when it frees up, another worker's poll (due earlier) dequeues the
          // retry the store's watchdog just made, before this attempt's own timeout timer gets to abort it.
          const end = Date.now() + 500;
          while (Date.now() < end);
          await new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
          );
        }
        return 1;
      } finally {
        active.delete(ctx.rolloutId);
      }
    };
    await drain(
      store,
      new Runner({ store, agent: agent as never, nWorkers: 3, pollIntervalSeconds: 0.01, logger: quiet }),
      [r.rolloutId],
    );
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(overlaps).toEqual([]);
    expect(['succeeded', 'failed']).toContain((await store.getRolloutById(r.rolloutId))?.status);
  });
});
