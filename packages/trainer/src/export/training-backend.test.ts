// The core `TrainingBackend` contract against a real store: a weight update publishes a new LLM resource version
// (Contract 4), and rollouts started afterwards record it.
import { describe, expect, it } from 'vitest';
import {
  publishTrainedResources,
  trainedTokenCount,
  type TrainingBackend,
  type TrainingSample,
} from '@agl/core/algorithms';
import { MemoryStore } from '@agl/store';
import { stepMetricsWithoutPolicyStats } from '../algorithms/step-metrics';

/** A backend whose "update" only bumps a model version: enough to check the publishing contract. */
class VersionBumpBackend implements TrainingBackend {
  #version = 1;
  async train(samples: readonly TrainingSample[], options: { signal?: AbortSignal }) {
    options.signal?.throwIfAborted();
    this.#version += 1;
    const tokens = samples.reduce((n, s) => n + trainedTokenCount(s), 0);
    return {
      resources: {
        main_llm: {
          resourceType: 'llm' as const,
          endpoint: 'http://127.0.0.1:9/v1',
          model: `policy-v${this.#version}`,
        },
      },
      metrics: stepMetricsWithoutPolicyStats(samples, { loss: 0, tokensPerSecond: tokens }),
    };
  }
}

function sample(reward: number, mask: number[]): TrainingSample {
  return {
    promptTokenIds: [1],
    responseTokenIds: mask.map(() => 2),
    responseMask: mask,
    advantage: 0,
    groupId: 'T',
    taskId: 'T',
    rolloutId: 'r',
    attemptId: 'a',
    mode: 'train',
    reward,
    turnIndices: [0],
    agentName: null,
  };
}

describe('TrainingBackend + publishTrainedResources', () => {
  it('publishes each weight update as a new version of the LLM resource', async () => {
    const store = new MemoryStore();
    const first = await store.updateResources('policy', {
      main_llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'policy-v1' },
    });
    expect(first.version).toBe(1);
    const backend = new VersionBumpBackend();
    const result = await backend.train([sample(1, [1, 1, 0]), sample(0, [1])], {});
    // rewards [1, 0]: mean 0.5, population std 0.5; trained tokens 2 + 1 = 3
    expect(result.metrics).toMatchObject({ rewardMean: 0.5, rewardStd: 0.5, tokensPerSecond: 3 });

    const published = await publishTrainedResources({ store, result, resourcesId: 'policy' });
    expect(published).toMatchObject({ resourcesId: 'policy', version: 2 });
    expect((await store.getLatestResources())?.resources.main_llm).toMatchObject({ model: 'policy-v2' });
    const rollout = await store.startRollout({ input: null });
    expect(rollout.resourcesId).toBe('policy');

    const fresh = await publishTrainedResources({ store, result });
    expect(fresh.resourcesId).not.toBe('policy');
    expect((await store.getLatestResources())?.resourcesId).toBe(fresh.resourcesId);
    await store.close();
  });

  it('honours the abort signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(new VersionBumpBackend().train([], { signal: controller.signal })).rejects.toThrow();
  });
});
