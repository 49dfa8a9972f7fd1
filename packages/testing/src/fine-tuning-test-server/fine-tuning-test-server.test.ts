// The fine-tuning test server through the official `openai` client: upload, job lifecycle, events, cancel, list,
// provider-side validation and injected failures.
import OpenAI, { toFile } from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFineTuningTestServer, type FineTuningTestServer } from './fine-tuning-test-server';

const line = (i: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `q${i}` },
      { role: 'assistant', content: `a${i}` },
    ],
  });
const good = Array.from({ length: 10 }, (_, i) => line(i)).join('\n') + '\n';

let ft: FineTuningTestServer;
let client: OpenAI;
beforeEach(async () => {
  ft = await startFineTuningTestServer({ apiKey: 'sk-test' });
  client = new OpenAI({ baseURL: ft.baseURL, apiKey: 'sk-test', maxRetries: 0 });
});
afterEach(() => ft.close());

async function upload(text: string) {
  return client.files.create({ file: await toFile(Buffer.from(text), 'train.jsonl'), purpose: 'fine-tune' });
}

describe('startFineTuningTestServer', () => {
  it('stores a multipart upload and serves it back', async () => {
    const file = await upload(good);
    expect(file).toMatchObject({ object: 'file', purpose: 'fine-tune', filename: 'train.jsonl', bytes: good.length });
    expect(await client.files.retrieve(file.id)).toEqual(file);
    expect(await (await client.files.content(file.id)).text()).toBe(good);
    await expect(client.files.retrieve('file-nope')).rejects.toMatchObject({ status: 404 });
  });

  it('runs a job validating_files -> queued -> running -> succeeded, one state per step', async () => {
    const file = await upload(good);
    const job = await client.fineTuning.jobs.create({
      model: 'gpt-4o-mini',
      training_file: file.id,
      suffix: 'bot',
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
    });
    expect(job).toMatchObject({ object: 'fine_tuning.job', status: 'validating_files', fine_tuned_model: null });
    const seen = [job.status];
    while (ft.step(job.id).length > 0) seen.push((await client.fineTuning.jobs.retrieve(job.id)).status);
    expect(seen).toEqual(['validating_files', 'queued', 'running', 'succeeded']);
    const done = await client.fineTuning.jobs.retrieve(job.id);
    expect(done.fine_tuned_model).toBe(`ft:gpt-4o-mini:agl-test:bot:${job.id.slice(6)}`);
    expect(done.hyperparameters.n_epochs).toBe(2);
    const events = [];
    for await (const e of client.fineTuning.jobs.listEvents(job.id, { limit: 2 })) events.push(e);
    expect(events[0]?.message).toBe('The job has successfully completed'); // newest first, paged 2 at a time
    expect(events.some((e) => e.type === 'metrics')).toBe(true);
    const listed = [];
    for await (const j of client.fineTuning.jobs.list()) listed.push(j.id);
    expect(listed).toEqual([job.id]);
  });

  it('advances a polled job with advance: on-poll', async () => {
    const polled = await startFineTuningTestServer({ advance: 'on-poll' });
    const c = new OpenAI({ baseURL: polled.baseURL, apiKey: 'x', maxRetries: 0 });
    const file = await c.files.create({ file: await toFile(Buffer.from(good), 't.jsonl'), purpose: 'fine-tune' });
    const job = await c.fineTuning.jobs.create({ model: 'm', training_file: file.id });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await c.fineTuning.jobs.retrieve(job.id)).status);
    expect(statuses).toEqual(['queued', 'running', 'succeeded']);
    await polled.close();
  });

  it('fails a job whose file breaks the provider rules, naming the line', async () => {
    const bad = await upload(`${line(0)}\n{"messages":[{"role":"robot","content":"x"}]}\n`);
    const job = await client.fineTuning.jobs.create({ model: 'm', training_file: bad.id });
    ft.finishAll(job.id);
    const failed = await client.fineTuning.jobs.retrieve(job.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ code: 'invalid_training_file', param: 'training_file' });
    expect(failed.error?.message).toContain('Line 2 messages[0] has an unknown role "robot"');
    const few = await upload(`${line(0)}\n`);
    const job2 = await client.fineTuning.jobs.create({ model: 'm', training_file: few.id });
    ft.finishAll(job2.id);
    expect((await client.fineTuning.jobs.retrieve(job2.id)).error?.message).toContain('at least 10');
  });

  it('fails the next job on request, cancels, and rejects bad requests with 4xx', async () => {
    const file = await upload(good);
    ft.failNextJob({ message: 'Out of capacity.' });
    const job = await client.fineTuning.jobs.create({ model: 'm', training_file: file.id });
    ft.finishAll();
    expect(await client.fineTuning.jobs.retrieve(job.id)).toMatchObject({
      status: 'failed',
      error: { code: 'training_failed', message: 'Out of capacity.' },
    });
    const job2 = await client.fineTuning.jobs.create({ model: 'm', training_file: file.id });
    expect((await client.fineTuning.jobs.cancel(job2.id)).status).toBe('cancelled');
    await expect(client.fineTuning.jobs.cancel(job2.id)).rejects.toMatchObject({ status: 400 });
    await expect(client.fineTuning.jobs.create({ model: 'm', training_file: 'file-missing' })).rejects.toMatchObject({
      status: 400,
    });
    const wrongKey = new OpenAI({ baseURL: ft.baseURL, apiKey: 'nope', maxRetries: 0 });
    await expect(wrongKey.fineTuning.jobs.list()).rejects.toMatchObject({ status: 401 });
  });
});
