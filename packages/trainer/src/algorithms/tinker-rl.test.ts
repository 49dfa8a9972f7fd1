// tinkerGrpo against the Tinker stand-in (real HTTP, a bigram model that trains): the agent reaches the model through
// its LLM resource (llmBaseUrl → the in-process Tinker-mode gateway) with the official openai client.
import { trace } from '@opentelemetry/api';
import type { TrainingSample } from '@agl/core/algorithms';
import { agentSpanAttributes, getAglTracer, llmRequestHeaders } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import { tokenizerForModel } from '@agl/tinker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutFn } from '../agent/lit-agent';
import { llmBaseUrl } from '../runner/process-env';
import { Trainer } from '../trainer/trainer';
import { recordingTinkerService, type Sampled } from './__fixtures__/recording-tinker-service';
import { offPolicyLag } from './grpo-samples';
import type { PolicyDatum } from './tinker-datums';
import { tinkerGrpo, type TinkerRlOptions } from './tinker-rl';

const KEY = 'tml-rl-test';
const BASE_MODEL = 'Qwen/Qwen3-8B';

/** One chat call through the LLM resource; the reward depends on what was sampled (so groups differ). */
async function ask(resources: Parameters<RolloutFn>[1], ctx: Parameters<RolloutFn>[2], content: string) {
  const llm = llmBaseUrl(resources, ctx.rolloutId, ctx.attemptId)!;
  const client = new OpenAI({ baseURL: llm.url, apiKey: 'unused', maxRetries: 0 });
  const res = await client.chat.completions.create(
    { model: llm.model, messages: [{ role: 'user', content }], max_tokens: 6 },
    { headers: llmRequestHeaders() },
  );
  return res.choices[0]?.message.content ?? '';
}

const oneCall: RolloutFn = async (task, resources, ctx) =>
  ((await ask(resources, ctx, `Say something about ${String(task)}.`)).length % 5) / 4;

/** Two agents per rollout, each in its own agent span: a planner, then a solver whose answer is scored. */
const twoAgents: RolloutFn = async (task, resources, ctx) => {
  const tracer = getAglTracer().getTracer();
  const inAgent = (name: string, content: string) =>
    tracer.startActiveSpan(`agent ${name}`, { attributes: agentSpanAttributes(name) }, async (span) => {
      try {
        return await ask(resources, ctx, content);
      } finally {
        span.end();
      }
    });
  await inAgent('planner', `Plan how to describe ${String(task)}.`);
  const answer = await inAgent('solver', `Describe ${String(task)}.`);
  expect(trace.getActiveSpan()).toBeUndefined();
  return (answer.length % 5) / 4;
};

describe('tinkerGrpo against the Tinker stand-in', () => {
  let standIn: TinkerStandIn;
  beforeAll(async () => {
    standIn = await startTinkerStandIn({ apiKey: KEY });
  });
  afterAll(async () => {
    await standIn?.close();
  });

  async function train(agent: RolloutFn, options: Omit<TinkerRlOptions, 'baseModel'>, nRunners = 4) {
    const sampled: Sampled[] = [];
    const steps: Array<{ datums: PolicyDatum[]; samples: readonly TrainingSample[] }> = [];
    const service = recordingTinkerService(standIn.url, KEY, sampled);
    const store = new MemoryStore();
    const algorithm = tinkerGrpo({
      baseModel: BASE_MODEL,
      service,
      loraRank: 8,
      learningRate: 0.05,
      tasksPerRound: 2,
      groupSize: 4,
      valEvery: 0,
      seed: 1,
      onDatums: (datums, samples) => steps.push({ datums, samples }),
      ...options,
    });
    try {
      await new Trainer({ algorithm, store, nRunners, quiet: true }).fit(agent, {
        train: ['cats', 'dogs', 'owls'],
        val: [],
      });
      const versions = (await store.queryResources({})).items;
      return { algorithm, sampled, steps, versions };
    } finally {
      await service.close();
      await store.close();
    }
  }

  it('maxStepsOffPolicy 0 is synchronous: each round samples the weights the round before trained', async () => {
    const { algorithm, sampled, versions } = await train(oneCall, { rounds: 3 });
    const rounds = algorithm.rounds;
    expect(rounds.map((r) => r.lag)).toEqual([0, 0, 0]);
    expect(rounds[1]!.sampledFrom).toBe(rounds[0]!.resourcesId);
    expect(rounds[2]!.sampledFrom).toBe(rounds[1]!.resourcesId);
    // The initial version (base model) plus one per round, each a proxy_llm at the gateway naming a sampler path.
    expect(versions).toHaveLength(4);
    const history = algorithm.backend!.history;
    expect(history.map((h) => h.step)).toEqual([1, 2, 3]);
    // Every asample of round r+1 sampled round r's sampler path, and only that.
    const targets = sampled.map((s) => ('modelPath' in s.target ? s.target.modelPath : s.target.baseModel));
    expect(targets).toEqual([
      ...Array<string>(8).fill(BASE_MODEL),
      ...Array<string>(8).fill(history[0]!.samplerPath),
      ...Array<string>(8).fill(history[1]!.samplerPath),
    ]);
    expect(algorithm.summary()).toMatchObject({ rounds: 3, rollouts: 24, samplerPath: history[2]!.samplerPath });
  }, 120_000);

  it('maxStepsOffPolicy 1 lets the next round sample while this one trains, at most one step behind', async () => {
    const { algorithm, sampled } = await train(oneCall, { rounds: 3, maxStepsOffPolicy: 1 });
    const rounds = algorithm.rounds;
    // Round 2 was enqueued before round 1 trained (the base weights), round 3 before round 2 trained.
    expect(rounds.map((r) => r.lag)).toEqual([0, 1, 1]);
    expect(rounds.every((r) => (r.lag ?? 0) <= 1 && r.droppedStale === 0)).toBe(true);
    expect(rounds[1]!.sampledFrom).toBe(rounds[0]!.sampledFrom);
    expect(rounds[2]!.sampledFrom).toBe(rounds[0]!.resourcesId);
    const history = algorithm.backend!.history;
    const targets = sampled.map((s) => ('modelPath' in s.target ? s.target.modelPath : s.target.baseModel));
    expect(targets.filter((t) => t === BASE_MODEL)).toHaveLength(16);
    expect(targets.filter((t) => t === history[0]!.samplerPath)).toHaveLength(8);
    // The rule that drops what is further behind than the bound.
    expect(offPolicyLag(0, 2, 1)).toEqual({ lag: 2, keep: false });
    expect(offPolicyLag(1, 2, 1)).toEqual({ lag: 1, keep: true });
    expect(offPolicyLag(2, 2, 0)).toEqual({ lag: 0, keep: true });
  }, 120_000);

  it('maxStepsOffPolicy 2 keeps two rounds in flight: the lag reaches 2 and never 3', async () => {
    // One runner finishes rollouts in the order they were enqueued, so rounds finish in order too.
    const { algorithm, sampled } = await train(oneCall, { rounds: 5, maxStepsOffPolicy: 2 }, 1);
    const rounds = algorithm.rounds;
    expect(rounds.map((r) => r.round)).toEqual([1, 2, 3, 4, 5]);
    // Rounds 2 and 3 were enqueued (on the base weights) before round 1 trained; then one more after each round.
    expect(rounds.map((r) => r.lag)).toEqual([0, 1, 2, 2, 2]);
    expect(rounds.every((r) => r.droppedStale === 0 && r.nSamples > 0)).toBe(true);
    expect(rounds[2]!.sampledFrom).toBe(rounds[0]!.sampledFrom);
    expect(rounds[3]!.sampledFrom).toBe(rounds[0]!.resourcesId);
    expect(rounds[4]!.sampledFrom).toBe(rounds[1]!.resourcesId);
    const history = algorithm.backend!.history;
    expect(history).toHaveLength(5);
    const targets = sampled.map((s) => ('modelPath' in s.target ? s.target.modelPath : s.target.baseModel));
    expect(targets.filter((t) => t === BASE_MODEL)).toHaveLength(24);
    expect(targets.filter((t) => t === history[0]!.samplerPath)).toHaveLength(8);
    expect(targets.filter((t) => t === history[1]!.samplerPath)).toHaveLength(8);
    expect(algorithm.summary().droppedStale).toBe(0);
  }, 180_000);

  it('a round held up by a slow runner past maxStepsOffPolicy is dropped and counted', async () => {
    let calls = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The 9th rollout is round 2's first (round 1's 8 all ran before round 2 was enqueued): it waits until round 4
    // has trained, so rounds 3 and 4 finish and train first and round 2 ends up 3 steps behind (K = 2).
    const slowRunner: RolloutFn = async (task, resources, ctx) => {
      calls += 1;
      if (calls === 9) await released;
      return oneCall(task, resources, ctx);
    };
    const { algorithm } = await train(slowRunner, {
      rounds: 5,
      maxStepsOffPolicy: 2,
      onRound: (r) => {
        if (r.round === 4) release();
      },
    });
    const rounds = algorithm.rounds;
    expect(rounds.map((r) => r.round).slice(0, 3)).toEqual([1, 3, 4]);
    expect(rounds.map((r) => r.round).sort()).toEqual([1, 2, 3, 4, 5]);
    const dropped = rounds.find((r) => r.round === 2)!;
    expect(dropped.lag).toBeGreaterThan(2);
    expect(dropped.droppedStale).toBe(8);
    expect(dropped.nSamples).toBe(0);
    expect(dropped.metrics).toBeNull();
    expect(rounds.filter((r) => r.round !== 2).every((r) => (r.lag ?? 0) <= 2 && r.droppedStale === 0)).toBe(true);
    // Four optimizer steps: the dropped round trained nothing.
    expect(algorithm.backend!.history).toHaveLength(4);
    expect(algorithm.summary()).toMatchObject({ rounds: 5, droppedStale: 8 });
  }, 180_000);

  it('RLOO trains leave-one-out advantages through the same primitives', async () => {
    const { algorithm, steps } = await train(oneCall, { algorithm: 'rloo', rounds: 1 });
    expect(algorithm.name).toBe('rloo');
    expect(steps).toHaveLength(1);
    const { samples, datums } = steps[0]!;
    expect(datums.length).toBeGreaterThan(0);
    const groups = new Map<string, TrainingSample[]>();
    for (const s of samples) groups.set(s.groupId, [...(groups.get(s.groupId) ?? []), s]);
    for (const group of groups.values()) {
      for (const s of group) {
        const others = group.filter((o) => o !== s);
        const baseline = others.reduce((sum, o) => sum + o.reward, 0) / others.length;
        expect(s.advantage).toBeCloseTo(s.reward - baseline, 9);
      }
    }
    expect(standIn.requestsTo('/api/v1/forward_backward').at(-1)!.body).toMatchObject({
      loss_fn: 'importance_sampling',
    });
  }, 120_000);

  it('rejection sampling trains only the best rollout of each group that reaches minReward', async () => {
    const { algorithm, steps } = await train(oneCall, {
      algorithm: 'rejection-sampling',
      minReward: 0.25,
      rounds: 1,
      groupSize: 6,
    });
    expect(algorithm.name).toBe('rejection-sampling');
    expect(steps).toHaveLength(1);
    const { samples, datums } = steps[0]!;
    expect(samples).toHaveLength(12);
    const byGroup = new Map<string, TrainingSample[]>();
    for (const s of samples) byGroup.set(s.groupId, [...(byGroup.get(s.groupId) ?? []), s]);
    let keptSamples = 0; // a task drawn twice in a round makes one group of 12
    for (const group of byGroup.values()) {
      const kept = group.filter((s) => s.advantage === 1);
      const best = Math.max(...group.map((s) => s.reward));
      expect(kept).toHaveLength(best >= 0.25 ? 1 : 0);
      if (kept.length === 0) continue;
      keptSamples += group.length;
      expect(kept[0]!.reward).toBe(best);
      expect(group.filter((s) => s !== kept[0]).every((s) => s.advantage === 0)).toBe(true);
    }
    // Groups with nothing kept are skipped; the rest train, the kept rollout's tokens with one (token-mean) weight.
    expect(datums.length).toBe(keptSamples);
    const trained = datums.flatMap((d) => d.loss_fn_inputs.advantages.filter((a) => a !== 0));
    expect(trained.length).toBeGreaterThan(0);
    expect(new Set(trained).size).toBe(1);
  }, 120_000);

  it('agentMatch trains only the matched agent’s tokens in a two-agent run', async () => {
    const { steps, sampled } = await train(twoAgents, { agentMatch: /^solver$/, rounds: 1 });
    const tok = await tokenizerForModel(BASE_MODEL);
    const key = (ids: readonly number[]) => ids.join(',');
    // 8 rollouts × 2 calls were sampled: the planner's prompts and the solver's, told apart by their text.
    expect(sampled).toHaveLength(16);
    const solver = sampled.filter((s) => tok.decode(s.prompt).includes('Describe '));
    const planner = sampled.filter((s) => tok.decode(s.prompt).includes('Plan how to describe'));
    expect(solver).toHaveLength(8);
    expect(planner).toHaveLength(8);
    const solverByPrompt = new Map(solver.map((s) => [key(s.prompt), s]));
    const plannerPrompts = new Set(planner.map((s) => key(s.prompt)));
    expect(steps).toHaveLength(1);
    const { samples, datums } = steps[0]!;
    expect(datums.length).toBeGreaterThan(0);
    expect(samples.every((s) => s.agentName === 'solver')).toBe(true);
    for (const [i, d] of datums.entries()) {
      const P = samples[i]!.promptTokenIds.length;
      const prompt = d.model_input.chunks[0]!.tokens.slice(0, P);
      expect(plannerPrompts.has(key(prompt)), `datum ${i} is the planner's`).toBe(false);
      const source = solverByPrompt.get(key(prompt));
      expect(source, `datum ${i}`).toBeDefined();
      // Only the solver's sampled ids and logprobs, exactly as asample returned them.
      const seq = d.loss_fn_inputs.target_tokens.slice(P - 1);
      expect(solver.some((s) => key(s.response.sequences[0]!.tokens) === key(seq))).toBe(true);
      expect(d.model_input.chunks[0]!.tokens.length).toBe(P + seq.length - 1);
    }
  }, 120_000);
});
