import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomWeightsDir, testTrainer, TOOL_EXAMPLES } from '../__fixtures__/tool-model';
import { startTinyServer, type TinyServer } from '../server/tiny-server';
import { TinyTrainer } from './tiny-trainer';

let dir: string;
let trainer: TinyTrainer;
let server: TinyServer;

beforeAll(async () => {
  dir = await randomWeightsDir('agl-tiny-train-', 2);
  trainer = await testTrainer(dir);
  server = await startTinyServer({ weightsDir: dir });
});
afterAll(async () => {
  await trainer?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('TinyTrainer (worker thread)', () => {
  it('runs SFT off the main thread, saves a version, and the server serves what it learned', async () => {
    // The event loop keeps turning while the worker computes a multi-step SFT call.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const steps = await trainer.sft({ examples: TOOL_EXAMPLES, steps: 20, batchSize: 3, seed: 1 });
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(3);
    const rows = await trainer.sftRows(TOOL_EXAMPLES);
    let loss = steps.at(-1)!.loss;
    for (let i = 0; i < 300 && loss > 0.02; i++) loss = (await trainer.sftStep(rows)).loss;
    expect(loss).toBeLessThan(steps[0]!.loss / 10);
    await trainer.save({ version: 'v1', meta: { sft: true } });
    await server.loadWeights('v1');
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
    const res = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0,
    });
    expect(res.choices[0]!.message.content).toBe('Hello there! ✓');
  });

  it('trains a policy step on the exact token ids and logprobs the server returned', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
    const res = (await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 1,
      seed: 1,
      max_tokens: 10,
      logprobs: true,
      // @ts-expect-error vLLM extension
      return_token_ids: true,
    })) as unknown as OpenAI.ChatCompletion & { prompt_token_ids: number[]; choices: Array<{ token_ids: number[] }> };
    const sample = {
      promptTokenIds: res.prompt_token_ids,
      responseTokenIds: res.choices[0]!.token_ids,
      logprobs: res.choices[0]!.logprobs!.content!.map((c) => c.logprob),
      advantage: 1,
    };
    const [before] = await trainer.responseLogprobs([sample]);
    before!.forEach((lp, i) => expect(lp).toBeCloseTo(sample.logprobs[i]!, 4));
    const m = await trainer.policyStep({ samples: [sample], klCoef: 0.05 });
    expect(m.tokens).toBe(sample.responseTokenIds.length);
    expect(m.kl).toBeGreaterThan(0);
    const [after] = await trainer.responseLogprobs([sample]);
    expect(after!.reduce((a, b) => a + b)).toBeGreaterThan(before!.reduce((a, b) => a + b));
    await expect(trainer.save({ version: 'v1' })).rejects.toThrow(/already exists/);

    // A checkpoint resumes the same weights and step count in a new worker.
    const path = join(dir, 'ckpt', 'latest.bin');
    await trainer.saveCheckpoint({ path, meta: { round: 1 } });
    const resumed = await TinyTrainer.create({ weightsDir: dir, checkpoint: path, reference: { version: 'v0' } });
    try {
      expect(await resumed.steps()).toBe(await trainer.steps());
      expect(await resumed.responseLogprobs([sample])).toEqual(await trainer.responseLogprobs([sample]));
    } finally {
      await resumed.close();
    }
  });
});
