// Rejection-sampling fine-tuning under Trainer.fit over the test servers: an in-process agent calls the OpenAI test
// server with the model its resources name and records the call; the OpenAI fine-tuning backend tunes on each round's
// best transcripts through the official client against the fine-tuning test server. Checks rounds, versions, tags and
// the stop rule.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitReward } from '@agl/core/tracer';
import { SqliteStore } from '@agl/store/sqlite';
import { startFineTuningServers, type FineTuningServers } from '@agl/testing';
import { instrumentedChat } from '../../test/instrumented-chat';
import { litAgent } from '../agent/lit-agent';
import { OpenAiFineTuningBackend } from '../finetune/openai-fine-tuning-backend';
import { RejectionSamplingFineTuning } from './rejection-sampling';
import { Trainer } from '../trainer/trainer';

let dir: string;
let servers: FineTuningServers;
const asked = new Map<string, number>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-rft-'));
  // The base model answers a training question right only the first time it is asked and never a validation one;
  // every tuned model answers right. So round 1 improves validation (0 → 1) and round 2 cannot (1 → 1).
  servers = await startFineTuningServers({
    fineTuning: { advance: 'on-poll' },
    llm: {
      respond: (r) => {
        const q = String(r.messages.at(-1)?.content ?? '');
        const n = (asked.get(`${r.model}|${q}`) ?? 0) + 1;
        asked.set(`${r.model}|${q}`, n);
        const right = r.model.startsWith('ft:') || (q.startsWith('train') && n === 1);
        return { content: right ? `answer to ${q}` : 'no idea' };
      },
    },
  });
});
afterAll(async () => {
  await servers.close();
  await rm(dir, { recursive: true, force: true });
});

const agent = litAgent({
  rollout: async (task: { q: string }, resources) => {
    const main = resources.main_llm as { endpoint: string; model: string };
    const client = new OpenAI({ baseURL: main.endpoint, apiKey: 'x', maxRetries: 0 });
    const reply = await instrumentedChat(client, { model: main.model, messages: [{ role: 'user', content: task.q }] });
    const answer = reply.choices[0]?.message.content ?? '';
    emitReward(answer === `answer to ${task.q}` ? 1 : 0);
  },
});

describe('RejectionSamplingFineTuning', () => {
  it('rounds of sample → select → fine-tune → publish → validate, stopping when validation stops improving', async () => {
    const path = join(dir, 'rft.sqlite');
    const client = new OpenAI({ baseURL: servers.ft.baseURL, apiKey: 'x', maxRetries: 0 });
    const backend = new OpenAiFineTuningBackend({
      store: new SqliteStore({ path }),
      client,
      baseModel: 'base',
      method: 'sft',
      pollIntervalMs: 0,
    });
    const algorithm = new RejectionSamplingFineTuning({ backend, samplesPerTask: 2, maxRounds: 5, patience: 1 });
    const train = Array.from({ length: 10 }, (_, i) => ({ id: `t${i}`, q: `train ${i}` }));
    const val = Array.from({ length: 3 }, (_, i) => ({ id: `v${i}`, q: `val ${i}` }));
    await new Trainer({
      store: path,
      algorithm,
      quiet: true,
      initialResources: {
        main_llm: { resourceType: 'llm', endpoint: servers.llm.baseURL, model: 'base' },
        prompt: { resourceType: 'prompt_template', template: 'Answer {q}' },
      },
    }).fit(agent as never, { train, val });

    const [start, r1, r2] = algorithm.rounds;
    expect(algorithm.rounds.map((r) => [r.round, r.valScore, r.improved, r.nSelected])).toEqual([
      [0, 0, false, 0],
      [1, 1, true, 10], // each task's first sample was right
      [2, 1, false, 10],
    ]);
    expect(algorithm.stopReason).toBe('patience');
    expect([r1!.sampledFrom, r2!.sampledFrom]).toEqual([start!.resourcesId, r1!.resourcesId]);
    expect(backend.jobs.map((j) => j.nExamples)).toEqual([10, 10]);
    expect(servers.ft.jobs.size).toBe(2);

    const store = new SqliteStore({ path });
    try {
      // one version per round, and the best (round 1) is the latest again after round 2 did no better
      const ids = new Set((await store.queryResources({})).items.map((v) => v.resourcesId));
      expect(ids).toEqual(new Set([start!.resourcesId, r1!.resourcesId, r2!.resourcesId]));
      const latest = await store.getLatestResources();
      expect(latest?.resourcesId).toBe(r1!.resourcesId);
      expect(latest?.resources.main_llm).toMatchObject({ model: backend.jobs[0]!.fineTunedModel });
      expect(latest?.resources.prompt).toMatchObject({ template: 'Answer {q}' });
      // every rollout is tagged with the version it ran with and its round
      const rollouts = (await store.queryRollouts({ modeIn: ['train', 'val'] })).items;
      const tag = (r: (typeof rollouts)[number]) => `${r.mode}:${String(r.metadata?.round)}:${r.resourcesId}`;
      const counts = new Map<string, number>();
      for (const r of rollouts) counts.set(tag(r), (counts.get(tag(r)) ?? 0) + 1);
      expect(Object.fromEntries(counts)).toEqual({
        [`val:0:${start!.resourcesId}`]: 3,
        [`train:1:${start!.resourcesId}`]: 20,
        [`val:1:${r1!.resourcesId}`]: 3,
        [`train:2:${r1!.resourcesId}`]: 20,
        [`val:2:${r2!.resourcesId}`]: 3,
      });
    } finally {
      await store.close();
    }
  });

  it('refuses to run without validation tasks', async () => {
    const algorithm = new RejectionSamplingFineTuning({
      backend: { train: () => Promise.reject(new Error('unused')) },
    });
    await expect(
      new Trainer({ store: join(dir, 'noval.sqlite'), algorithm, quiet: true }).fit(agent as never, {
        train: [{ q: 'x' }],
      }),
    ).rejects.toThrow(/needs training tasks .* and validation tasks/u);
    expect(() => new RejectionSamplingFineTuning({ backend: algorithm as never, patience: 0 })).toThrow(
      /patience must be an integer/u,
    );
  });
});
