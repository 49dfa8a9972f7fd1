import type { Rollout, Trajectory } from '@agl/core';
import { tokenTrajectory } from '@agl/testing';
import type { RolloutInfo } from '@agl/core/transitions';
import type { TrainingSample } from '@agl/core/algorithms';
import { MemoryStore } from '@agl/store';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '@agl/core/random';
import { GRPO, type GrpoOptions } from './grpo';
import { stepMetricsWithoutPolicyStats } from './step-metrics';

/**
 * Runs GRPO with a simulated policy: rollouts finish in an order shuffled by `orderSeed`, and within a task's group
 * the k-th rollout to finish gets sample k (what a sampling server that seeds by prompt and repeat count does).
 * Returns what the backend was asked to train on, without the (random) rollout ids.
 */
async function trainedOn(orderSeed: number, options: Partial<GrpoOptions> = {}): Promise<unknown[][]> {
  const store = new MemoryStore({ scanDebounceSeconds: 0 });
  const sampleOf = new Map<string, number>();
  const batches: unknown[][] = [];
  const controller = new AbortController();
  const shuffle = seededRandom(orderSeed);
  let running = true;
  const policy = (async () => {
    while (running) {
      const claimed: Rollout[] = [];
      for (let r = await store.dequeueRollout(); r; r = await store.dequeueRollout()) claimed.push(r);
      for (let i = claimed.length - 1; i > 0; i -= 1) {
        const j = Math.floor(shuffle() * (i + 1));
        [claimed[i], claimed[j]] = [claimed[j]!, claimed[i]!];
      }
      const seen = new Map<unknown, number>();
      for (const r of claimed) {
        const k = seen.get(r.input) ?? 0;
        seen.set(r.input, k + 1);
        sampleOf.set(r.rolloutId, (r.input as number) * 10 + k);
        await store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const adapter = {
    adapt: (_spans: unknown, rollout?: RolloutInfo): Trajectory => {
      const sample = sampleOf.get(rollout!.rolloutId)!;
      return tokenTrajectory(rollout, {
        promptTokenIds: [rollout!.input as number],
        responseTokenIds: [sample, 0],
        finalReward: sample % 3 === 0 ? 1 : 0,
      });
    },
  };
  const backend = {
    train: async (samples: readonly TrainingSample[]) => {
      batches.push(
        samples.map((s) => [s.taskId, s.promptTokenIds, s.responseTokenIds, s.reward, s.advantage, s.responseMask]),
      );
      return {
        resources: {},
        metrics: stepMetricsWithoutPolicyStats(samples, { loss: 0, tokensPerSecond: 0 }),
      };
    },
  };
  try {
    await new GRPO({ backend, rounds: 3, tasksPerRound: 4, groupSize: 6, seed: 7, ...options }).run({
      store,
      train: [1, 2, 3, 4, 5, 6, 7, 8, 9],
      val: [],
      adapter,
      signal: controller.signal,
    });
  } finally {
    running = false;
    await policy;
    await store.close();
  }
  return batches;
}

describe('GRPO', () => {
  it('trains on the same batches, in the same order, whatever order the rollouts finish in', async () => {
    const [a, b] = [await trainedOn(1), await trainedOn(2)];
    expect(a).toHaveLength(3);
    expect(a[0]).toHaveLength(24);
    expect(b).toEqual(a);
    // Some groups have rewards that differ (so advantages are not all zero, and the order matters to the check).
    expect(a.flat().some((s) => (s as number[])[4] !== 0)).toBe(true);
  });

  it('narrows the negative credit to the first divergence when asked', async () => {
    const masks = (batches: unknown[][]) => batches.flat().map((s) => [(s as number[])[4]! < 0, (s as unknown[])[5]]);
    const whole = masks(await trainedOn(1));
    const narrowed = masks(await trainedOn(1, { negativeCredit: 'first-divergence' }));
    expect(whole.filter(([negative]) => negative).length).toBeGreaterThan(10);
    expect(whole.every(([, mask]) => JSON.stringify(mask) === '[1,1]')).toBe(true);
    // A group's rollouts differ in their first token: a worse one keeps its blame there, not on the shared token after.
    expect(narrowed.filter(([negative]) => negative).map(([, mask]) => mask)).toEqual(
      whole.filter(([negative]) => negative).map(() => [1, 0]),
    );
    expect(narrowed.filter(([negative]) => !negative).every(([, mask]) => JSON.stringify(mask) === '[1,1]')).toBe(true);
  });
});
