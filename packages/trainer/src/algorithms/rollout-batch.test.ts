import type { Span, Trajectory } from '@agl/core';
import { taskIdOf } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import { MemoryStore } from '@agl/store';
import { describe, expect, it } from 'vitest';
import { RolloutBatch, runRolloutBatch, taskRequest } from './rollout-batch';

const adapter = {
  adapt: (spans: readonly Span[], rollout?: { rolloutId: string; input?: unknown }): Trajectory => ({
    rolloutId: rollout!.rolloutId,
    attemptId: 'a',
    taskId: String(rollout!.input),
    mode: 'train',
    transitions: [],
    finalReward: spans.length,
  }),
};

describe('RolloutBatch', () => {
  it('taskRequest records core taskIdOf as metadata.task_id beside the extra metadata', () => {
    const request = taskRequest({ id: 'q1' }, { mode: 'train', resourcesId: 'r1', metadata: { round: 2 } });
    expect(request).toEqual({
      input: { id: 'q1' },
      mode: 'train',
      resourcesId: 'r1',
      metadata: { task_id: 'q1', round: 2 },
    });
    expect(taskRequest('x', { mode: 'val', resourcesId: null }).metadata).toEqual({
      task_id: taskIdOf({ input: 'x' }),
    });
  });

  it('runRolloutBatch returns trajectories in request order whatever order the rollouts finish in', async () => {
    const store = new MemoryStore({ scanDebounceSeconds: 0 });
    const requests = ['a', 'b', 'c'].map((t) => taskRequest(t, { mode: 'train', resourcesId: null }));
    const run = runRolloutBatch({ store, signal: new AbortController().signal, requests, adapter, who: 'Test' });
    const claimed = [];
    for (let r = await store.dequeueRollout(); claimed.length < 3; r = await store.dequeueRollout())
      if (r) claimed.push(r);
    for (const r of claimed.reverse()) await store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
    expect((await run).map((t) => t.taskId)).toEqual(['a', 'b', 'c']);
  });

  it('runRolloutBatch names the caller when the signal aborts before every rollout finished', async () => {
    const store = new MemoryStore({ scanDebounceSeconds: 0 });
    const controller = new AbortController();
    const requests = [taskRequest('a', { mode: 'train', resourcesId: null })];
    const run = runRolloutBatch({ store, signal: controller.signal, requests, adapter, who: 'GRPO' });
    controller.abort('user');
    await expect(run).rejects.toThrow(UserError);
    await expect(run).rejects.toThrow('GRPO was stopped while waiting for 1 rollouts: user');
  });

  it('drain stops at the timeout, leaving unfinished rollouts pending, and waits for tracked ones', async () => {
    const store = new MemoryStore({ scanDebounceSeconds: 0 });
    const [early] = await store.enqueueRollouts([{ input: 'early' }]);
    const batch = new RolloutBatch({ store, signal: new AbortController().signal, waitSeconds: 0.01 });
    batch.track([early!.rolloutId]);
    const [late] = await batch.enqueue([taskRequest('late', { mode: 'train', resourcesId: null })]);
    const claimed = await store.dequeueRollout();
    await store.updateAttempt(claimed!.rolloutId, 'latest', { status: 'succeeded' });
    let clock = 0;
    const seen: string[] = [];
    const finished = await batch.drain({
      timeoutSeconds: 1,
      now: () => (clock += 0.25),
      onFinished: (r) => void seen.push(r.rolloutId),
    });
    expect([...finished.keys()]).toEqual([early!.rolloutId]);
    expect(seen).toEqual([early!.rolloutId]);
    expect(batch.pending).toBe(1);
    expect(late!.metadata).toMatchObject({ task_id: taskIdOf({ input: 'late' }) });
  });
});
