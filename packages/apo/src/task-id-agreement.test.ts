import type { LightningStore, Rollout, Trajectory } from '@agl/core';
import { taskIdOf } from '@agl/core/transitions';
import { MemoryStore } from '@agl/store';
import { Baseline, GRPO } from '@agl/trainer';
import { describe, expect, it } from 'vitest';
import { Evaluator } from './evaluator';

const TASKS: unknown[] = [{ id: 'q1', question: 'a' }, { taskId: 7 }, { question: 'no id', b: 1, a: [2] }, 'plain'];

/** Finishes every queued rollout until `stop` resolves (stands in for a runner). */
function finishAll(store: LightningStore, until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.finally(() => (done = true));
  return (async () => {
    while (!done) {
      const r = await store.dequeueRollout();
      if (r) await store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      else await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
}

const adapter = {
  adapt: (_spans: unknown, rollout?: { rolloutId: string; metadata?: Record<string, unknown> | null }): Trajectory => ({
    rolloutId: rollout!.rolloutId,
    attemptId: 'a',
    taskId: String(rollout!.metadata?.task_id),
    mode: 'train',
    transitions: [],
    finalReward: null,
  }),
};

/** `metadata.task_id` of each rollout in `store`, keyed by its canonical input. */
async function recordedIds(store: LightningStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of (await store.queryRollouts({ limit: -1 })).items as Rollout[]) {
    const recorded = String(r.metadata?.task_id);
    expect(taskIdOf(r)).toBe(recorded);
    expect(taskIdOf({ input: r.input })).toBe(recorded);
    out.set(JSON.stringify(r.input), recorded);
  }
  return out;
}

describe('task ids (DESIGN Contract 3): every algorithm records the same one for the same task', () => {
  it('Baseline, GRPO and the APO evaluator record core taskIdOf, which reads back the same from metadata or input', async () => {
    const baselineStore = new MemoryStore({ scanDebounceSeconds: 0 });
    const baseline = new Baseline({ pollIntervalSeconds: 0.01 });
    const run = baseline.run({
      store: baselineStore,
      train: TASKS,
      val: [],
      adapter,
      signal: new AbortController().signal,
    });
    await Promise.all([run, finishAll(baselineStore, run)]);

    const apoStore = new MemoryStore({ scanDebounceSeconds: 0 });
    const evaluator = new Evaluator({
      store: apoStore,
      runId: 'r',
      resourceName: 'prompt',
      baseResources: {},
      timeoutSeconds: 10,
      signal: new AbortController().signal,
    });
    const evaluation = evaluator.evaluate(
      { version: 'v0', template: 't', parent: null, round: 0, origin: 'seed' },
      TASKS,
      'val',
      'k',
    );
    await Promise.all([evaluation, finishAll(apoStore, evaluation)]);

    const grpoStore = new MemoryStore({ scanDebounceSeconds: 0 });
    const backend = { train: async () => ({ resources: {}, metrics: null as never }) };
    const grpo = new GRPO({ backend, rounds: 1, tasksPerRound: 8, groupSize: 1, valEvery: 0 });
    const grpoRun = grpo.run({
      store: grpoStore,
      train: TASKS,
      val: TASKS,
      adapter,
      signal: new AbortController().signal,
    });
    await Promise.all([grpoRun, finishAll(grpoStore, grpoRun)]);

    const fromBaseline = await recordedIds(baselineStore);
    expect(fromBaseline).toEqual(await recordedIds(apoStore));
    expect(fromBaseline).toEqual(await recordedIds(grpoStore));
    expect(fromBaseline.get(JSON.stringify(TASKS[0]))).toBe('q1');
    expect(fromBaseline.get(JSON.stringify(TASKS[1]))).toBe('7');
    expect(fromBaseline.get('"plain"')).toMatch(/^task-[0-9a-f]{16}$/);
    expect([...(await evaluation).perTask.keys()].sort()).toEqual([...fromBaseline.values()].sort());
  });
});
