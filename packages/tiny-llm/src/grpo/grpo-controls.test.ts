import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '@agl/core';
import type { TrainingSample } from '@agl/core/algorithms';
import type { RolloutInfo } from '@agl/core/transitions';
import { MemoryStore } from '@agl/store';
import { tokenTrajectory } from '@agl/testing';
import { ServiceClient, type SamplingClient } from '@agl/tinker';
import { GRPO, TinkerTrainingBackend, type GrpoOptions } from '@agl/trainer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomTestWeights } from '../__fixtures__/tool-model';
import { WeightStore } from '../model/weight-store';
import { startTinyServer, type TinyServer } from '../server/tiny-server';
import { encodeId, parseTinkerPath } from '../tinker/tinker-paths';

/**
 * The Calc-X controls (examples/calc-x/README.md, "Controls"; `npm run bench:controls`), short: GRPO through Tinker's
 * API (`@agl/tinker`'s ServiceClient/TrainingClient → `TinkerTrainingBackend` → the tiny server's `/api/v1`:
 * forward_backward with the `ppo` loss, optim_step, save_weights_for_sampler) on a tiny random policy, from the same
 * start for each variant. Half of each task's rollouts answer GOOD (reward 1), half BAD (reward 0), with the logprobs
 * of the sampler weights the round samples from. What the README reports: GRPO learns (GOOD becomes likelier than BAD),
 * shuffled rewards carry no signal (the advantages no longer follow the rewards, and GOOD gains a fraction), zero
 * advantages change no weight (the last sampler weights, read back from their file, equal the start bit for bit).
 */
const PROMPT = [1, 72, 105, 3];
const GOOD = [50, 51, 52, 53];
const BAD = [60, 61, 62, 63];
const BASE = 'agl-tiny@v0';

let dir: string;
let server: TinyServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-grpo-controls-'));
  await new WeightStore({ dir }).save({ weights: randomTestWeights(3), version: 'v0' });
  server = await startTinyServer({ weightsDir: dir, tinker: true, tinkerLongPollMs: 200 });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

interface ControlRun {
  /** Sum of GOOD's token logprobs minus BAD's, after training minus before. */
  marginGain: number;
  /** Each trained sample's true reward and the advantage GRPO gave it. */
  samples: Array<{ reward: number; advantage: number }>;
  weightsBefore: Record<string, Float32Array>;
  weightsAfter: Record<string, Float32Array>;
}

/** The response's token logprobs under a sampling client (prompt logprobs of prompt + response). */
async function responseLogprobs(sampler: SamplingClient, response: number[]): Promise<number[]> {
  const all = await sampler.computeLogprobs([...PROMPT, ...response]);
  return all.slice(PROMPT.length).map((l) => l ?? 0);
}

async function runControl(control: GrpoOptions['control']): Promise<ControlRun> {
  const service = new ServiceClient({
    baseUrl: server.tinkerUrl!,
    apiKey: 'tml-controls',
    heartbeatIntervalMs: 60_000,
  });
  const store = new MemoryStore({ scanDebounceSeconds: 0 });
  const controller = new AbortController();
  try {
    const training = await service.createLoraTrainingClient({ baseModel: BASE, rank: 8 });
    const samplers = new Map<string, Promise<SamplingClient>>();
    const samplerOf = (path: string | null): Promise<SamplingClient> => {
      const key = path ?? BASE;
      if (!samplers.has(key))
        samplers.set(
          key,
          path ? training.createSamplingClient(path) : service.createSamplingClient({ baseModel: BASE }),
        );
      return samplers.get(key)!;
    };
    const margin = async (sampler: SamplingClient): Promise<number> => {
      const [good, bad] = await Promise.all([GOOD, BAD].map((r) => responseLogprobs(sampler, r)));
      return good!.reduce((a, b) => a + b, 0) - bad!.reduce((a, b) => a + b, 0);
    };
    const before = await margin(await samplerOf(null));
    const samples: ControlRun['samples'] = [];
    const inner = new TinkerTrainingBackend({
      training,
      baseUrl: server.tinkerUrl!,
      loss: 'ppo',
      learningRate: 1e-2,
      adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
    });
    // The "policy": finishes every queued rollout; the k-th of a task's group answers GOOD when k is even.
    const answer = new Map<string, number[]>();
    const served = new Map<unknown, number>();
    let running = true;
    const policy = (async () => {
      while (running) {
        for (let r = await store.dequeueRollout(); r; r = await store.dequeueRollout()) {
          const key = JSON.stringify([r.input, r.metadata?.round]);
          const k = served.get(key) ?? 0;
          served.set(key, k + 1);
          answer.set(r.rolloutId, k % 2 === 0 ? GOOD : BAD);
          await store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
        }
        await store.waitForQueue({ timeoutMs: 100 });
      }
    })();
    const adapter = {
      // The rollout-time logprobs: those of the sampler weights the round samples (the last saved sampler path).
      adapt: async (_spans: unknown, rollout?: RolloutInfo): Promise<Trajectory> => {
        const response = answer.get(rollout!.rolloutId)!;
        const logprobs = await responseLogprobs(await samplerOf(inner.samplerPath), response);
        return tokenTrajectory(rollout, {
          promptTokenIds: PROMPT,
          responseTokenIds: response,
          logprobs,
          finalReward: response === GOOD ? 1 : 0,
        });
      },
    };
    const backend = {
      train: (batch: readonly TrainingSample[]) => {
        for (const s of batch)
          samples.push({ reward: s.responseTokenIds[0] === GOOD[0] ? 1 : 0, advantage: s.advantage });
        return inner.train(batch);
      },
    };
    try {
      const grpo = new GRPO({ backend, control, rounds: 4, tasksPerRound: 2, groupSize: 4, seed: 5 });
      await grpo.run({ store, train: [1, 2, 3], val: [], adapter, signal: controller.signal });
    } finally {
      running = false;
      await policy;
    }
    // The weights after the last round, read back from the sampler weights file save_weights_for_sampler wrote.
    const last = parseTinkerPath(inner.samplerPath!);
    const samplerDir = join(dir, 'tinker', encodeId(last.modelId), 'sampler_weights');
    return {
      marginGain: (await margin(await samplerOf(inner.samplerPath))) - before,
      samples,
      weightsBefore: (await new WeightStore({ dir }).load('v0')).weights.params,
      weightsAfter: (await new WeightStore({ dir: samplerDir }).load(last.name)).weights.params,
    };
  } finally {
    await store.close();
    await service.close();
  }
}

/** Pearson correlation of the samples' true rewards with their advantages. */
function correlation(samples: ControlRun['samples']): number {
  const n = samples.length;
  const mr = samples.reduce((a, s) => a + s.reward, 0) / n;
  const ma = samples.reduce((a, s) => a + s.advantage, 0) / n;
  let cov = 0;
  let vr = 0;
  let va = 0;
  for (const s of samples) {
    cov += (s.reward - mr) * (s.advantage - ma);
    vr += (s.reward - mr) ** 2;
    va += (s.advantage - ma) ** 2;
  }
  return va === 0 ? 0 : cov / Math.sqrt(vr * va);
}

describe('GRPO controls through the Tinker API (Calc-X README), short', { timeout: 120_000 }, () => {
  it('the real signal learns; shuffled rewards decorrelate the advantages and learn much less; zero advantages change no weight', async () => {
    const real = await runControl('none');
    const shuffled = await runControl('shuffled-rewards');
    const zero = await runControl('zero-advantages');
    for (const run of [real, shuffled, zero]) expect(run.samples).toHaveLength(4 * 2 * 4);

    // GRPO: advantages follow the rewards exactly, and GOOD becomes clearly likelier than BAD.
    expect(correlation(real.samples)).toBeGreaterThan(0.99);
    expect(real.marginGain).toBeGreaterThan(1);
    // Shuffled rewards: the advantages no longer follow the rewards, and GOOD gains a fraction of what GRPO gave it.
    expect(Math.abs(correlation(shuffled.samples))).toBeLessThan(0.5);
    expect(shuffled.marginGain).toBeLessThan(real.marginGain / 3);
    // Zero advantages: every parameter is bit-for-bit the starting one.
    expect(zero.samples.every((s) => s.advantage === 0)).toBe(true);
    expect(zero.marginGain).toBe(0);
    expect(Object.keys(zero.weightsAfter)).toEqual(Object.keys(zero.weightsBefore));
    for (const [name, values] of Object.entries(zero.weightsAfter))
      expect(Buffer.from(values.buffer).equals(Buffer.from(zero.weightsBefore[name]!.buffer)), name).toBe(true);
    // ...while the real run moved them.
    expect(
      Object.entries(real.weightsAfter).some(
        ([name, values]) => !Buffer.from(values.buffer).equals(Buffer.from(real.weightsBefore[name]!.buffer)),
      ),
    ).toBe(true);
  });
});
