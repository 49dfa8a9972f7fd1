import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrainingSample } from '@agl/core/algorithms';
import { startGateway, type Gateway } from '@agl/gateway';
import { MemoryStore } from '@agl/store';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutFn } from '../agent/lit-agent';
import { Trainer } from '../trainer/trainer';
import { recordingTinkerService, type Sampled } from './__fixtures__/recording-tinker-service';
import { GRPO } from './grpo';
import { TinkerTrainingBackend } from './tinker-backend';
import type { PolicyDatum } from './tinker-datums';

const KEY = 'tml-grpo-test';
const BASE_MODEL = 'Qwen/Qwen3-8B';

/** A small agent: one chat call through the rollout-scoped gateway URL; the reward depends on what it sampled. */
function smallAgent(gateway: Gateway): RolloutFn {
  return async (task, _resources, ctx) => {
    const client = new OpenAI({
      baseURL: `${gateway.url}/rollout/${ctx.rolloutId}/attempt/${ctx.attemptId}/v1`,
      apiKey: 'agent-key',
      maxRetries: 0,
    });
    const res = await client.chat.completions.create({
      model: 'policy',
      messages: [{ role: 'user', content: `Say something about ${String(task)}.` }],
      max_tokens: 6,
    });
    return ((res.choices[0]?.message.content ?? '').length % 5) / 4;
  };
}

describe('GRPO over Tinker (TinkerTrainingBackend) against the Tinker stand-in', () => {
  let standIn: TinkerStandIn;
  let dir: string;
  beforeAll(async () => {
    standIn = await startTinkerStandIn({ apiKey: KEY });
    dir = await mkdtemp(join(tmpdir(), 'grpo-tinker-'));
  });
  afterAll(async () => {
    await standIn?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('trains on asample’s exact ids and logprobs, samples round 2 from round 1’s sampler path, and resumes a killed run with load_weights', async () => {
    const sampled: Sampled[] = [];
    const steps: Array<{ datums: PolicyDatum[]; samples: readonly TrainingSample[] }> = [];
    const checkpointDir = join(dir, 'grpo');
    const initialResources = {
      main_llm: { resourceType: 'llm' as const, endpoint: standIn.url, model: BASE_MODEL, samplingParameters: {} },
    };
    /** One process's run: its own Tinker client, gateway, training model and GRPO over the same checkpoint dir. */
    const run = async (rounds: number) => {
      const service = recordingTinkerService(standIn.url, KEY, sampled);
      const store = new MemoryStore();
      const gateway = await startGateway({
        store,
        port: 0,
        routeCacheTtlMs: 0,
        tinker: { service, baseModel: BASE_MODEL },
      });
      try {
        const training = await service.createLoraTrainingClient({ baseModel: BASE_MODEL, rank: 8 });
        const backend = new TinkerTrainingBackend({
          training,
          baseUrl: standIn.url,
          learningRate: 0.05,
          onDatums: (datums, samples) => steps.push({ datums, samples }),
        });
        const grpo = new GRPO({ backend, rounds, tasksPerRound: 3, groupSize: 4, valEvery: 0, checkpointDir, seed: 3 });
        await new Trainer({ algorithm: grpo, store, nRunners: 4, initialResources, quiet: true }).fit(
          smallAgent(gateway),
          {
            train: ['cats', 'dogs', 'owls', 'bees'],
            val: [],
          },
        );
        return { grpo, backend, training };
      } finally {
        await gateway.close();
        await service.close();
        await store.close();
      }
    };

    // Round 1, then the process "dies"; a new process resumes from the checkpoint directory and runs round 2 only.
    const first = await run(1);
    expect(first.grpo.rounds.map((r) => r.round)).toEqual([1]);
    const round1Sampler = first.backend.samplerPath!;
    expect(round1Sampler).toMatch(new RegExp(`^tinker://${first.training.modelId}/sampler_weights/000001$`));
    const saved = standIn.requestsTo('/api/v1/save_weights').map((r) => (r.body as { path: string }).path);
    expect(saved).toEqual(['000001']);
    const sampledInRound1 = sampled.length;

    const second = await run(2);
    expect(second.grpo.rounds.map((r) => r.round)).toEqual([2]);
    const loads = standIn
      .requestsTo('/api/v1/load_weights')
      .map((r) => r.body as { model_id: string; path: string; optimizer: boolean });
    expect(loads).toEqual([
      expect.objectContaining({
        model_id: second.training.modelId,
        path: `tinker://${first.training.modelId}/weights/000001`,
        optimizer: true,
      }),
    ]);
    expect(second.backend.samplerPath).toBe(`tinker://${second.training.modelId}/sampler_weights/000002`);

    // Round 1 sampled the base model; round 2 sampled only round 1's sampler path.
    expect(sampled.slice(0, sampledInRound1).every((s) => 'baseModel' in s.target)).toBe(true);
    expect(sampled.slice(sampledInRound1).length).toBe(12);
    expect(
      sampled.slice(sampledInRound1).every((s) => 'modelPath' in s.target && s.target.modelPath === round1Sampler),
    ).toBe(true);

    expect(steps).toHaveLength(2);
    steps.forEach(({ datums, samples }, round) => {
      const pool = (round === 0 ? sampled.slice(0, sampledInRound1) : sampled.slice(sampledInRound1)).map(
        (s) => s.response.sequences[0]!,
      );
      datums.forEach((d, i) => {
        const s = samples[i]!;
        const P = s.promptTokenIds.length;
        expect(d.model_input.chunks[0]!.tokens).toEqual([...s.promptTokenIds, ...s.responseTokenIds].slice(0, -1));
        // The datum's targets and logprobs after the prompt are one asample sequence's, exactly.
        const targets = d.loss_fn_inputs.target_tokens.slice(P - 1);
        const match = pool.find((q) => JSON.stringify(q.tokens) === JSON.stringify(targets));
        expect(match, `datum ${i} of round ${round + 1}`).toBeDefined();
        expect(d.loss_fn_inputs.logprobs.slice(P - 1)).toEqual(match!.logprobs);
        expect(d.loss_fn_inputs.advantages.slice(0, P - 1).every((a) => a === 0)).toBe(true);
      });
      // GRPO advantages: zero-sum within each group, ordered as the rewards.
      const groups = new Map<string, TrainingSample[]>();
      for (const s of samples) groups.set(s.groupId, [...(groups.get(s.groupId) ?? []), s]);
      for (const group of groups.values()) {
        expect(Math.abs(group.reduce((sum, s) => sum + s.advantage, 0))).toBeLessThan(1e-9);
        for (const a of group)
          for (const b of group) if (a.reward < b.reward) expect(a.advantage).toBeLessThan(b.advantage);
        expect(group.some((s) => s.advantage !== 0)).toBe(true);
      }
    });
    // The stand-in trained on what the backend sent: one forward_backward, optim_step and sampler save per round.
    expect(standIn.requestsTo('/api/v1/forward_backward')).toHaveLength(2);
    expect(standIn.requestsTo('/api/v1/optim_step')).toHaveLength(2);
    expect(standIn.requestsTo('/api/v1/save_weights_for_sampler')).toHaveLength(2);
  });
});
