import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceToTransitions } from '@agl/core/transitions';
import { buildTrainingSamples } from '@agl/core/algorithms';
import { startGateway, type Gateway } from '@agl/gateway';
import { MemoryStore } from '@agl/store';
import { startTinyServer, type TinyServer } from '@agl/tiny-llm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_TOOL } from './calc-tasks';
import { DEFAULT_MODEL } from './run-calc-x';

let dir: string;
let server: TinyServer;
let gateway: Gateway;
const store = new MemoryStore();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'calc-x-ids-'));
  server = await startTinyServer({ weightsDir: dir, init: { config: DEFAULT_MODEL, seed: 5 }, samplingSeed: 5 });
  gateway = await startGateway({ store, port: 0 });
  await store.addResources({ main_llm: { resourceType: 'llm', endpoint: `${server.url}/v1`, model: 'agl-tiny@v0' } });
});
afterAll(async () => {
  await gateway?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

interface VllmChat {
  prompt_token_ids: number[];
  choices: Array<{ token_ids: number[]; logprobs: { content: Array<{ logprob: number }> } }>;
}

describe('token ids through the gateway', () => {
  it('builds training samples whose token ids are exactly the ids the tiny server returned', async () => {
    const rollout = await store.startRollout({
      input: { question: '1234+5678' },
      mode: 'train',
      metadata: { task_id: 't1' },
    });
    const body = {
      model: 'policy',
      messages: [{ role: 'user' as const, content: '1234+5678' }],
      tools: [CALC_TOOL],
      temperature: 0,
      max_tokens: 24,
      logprobs: true,
      return_token_ids: true,
    };
    const viaGateway = new OpenAI({
      baseURL: `${gateway.url}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1`,
      apiKey: 'unused',
    });
    const got = (await viaGateway.chat.completions.create(body)) as unknown as VllmChat;
    // The same greedy request straight to the server: the ids the server produces for this prompt.
    const direct = (await new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' }).chat.completions.create(
      body,
    )) as unknown as VllmChat;
    expect(got.prompt_token_ids).toEqual(direct.prompt_token_ids);
    expect(got.choices[0]!.token_ids).toEqual(direct.choices[0]!.token_ids);
    expect(direct.choices[0]!.token_ids.length).toBeGreaterThan(0);

    await store.updateAttempt(rollout.rolloutId, rollout.attempt.attemptId, { status: 'succeeded' });
    const trajectory = await new TraceToTransitions().fromStore({ store, rolloutId: rollout.rolloutId });
    const { samples } = buildTrainingSamples({
      trajectories: [{ ...trajectory, finalReward: 1 }],
      level: 'trajectory',
    });
    expect(samples).toHaveLength(1);
    expect(samples[0]!.promptTokenIds).toEqual(direct.prompt_token_ids);
    expect(samples[0]!.responseTokenIds).toEqual(direct.choices[0]!.token_ids);
    expect(samples[0]!.logprobs).toEqual(direct.choices[0]!.logprobs.content.map((c) => c.logprob));

    // The server's prefix cache, as the span records it: nothing the first time, all but the last prompt token after.
    const again = await store.startRollout({ input: { question: '1234+5678' }, mode: 'train' });
    await new OpenAI({
      baseURL: `${gateway.url}/rollout/${again.rolloutId}/attempt/${again.attempt.attemptId}/v1`,
      apiKey: 'unused',
    }).chat.completions.create(body);
    const cacheRead = async (rolloutId: string) =>
      (await store.querySpans({ rolloutId, attemptId: 'latest' })).items.map(
        (s) => s.attributes['gen_ai.usage.cache_read.input_tokens'],
      );
    expect(await cacheRead(rollout.rolloutId)).toEqual([0]);
    expect(await cacheRead(again.rolloutId)).toEqual([direct.prompt_token_ids.length - 1]);
  });
});
