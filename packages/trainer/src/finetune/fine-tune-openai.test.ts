// The hosted fine-tuning loop through the official `openai` client against the fine-tuning test server: SFT and DPO
// jobs from a seeded SQLite store, the uploaded file line by line, re-attach after a restart, Ctrl-C, a failed job
// and an invalid file (clear errors, nothing published), and exactly one new resources version on success.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { startFineTuningTestServer, type FineTuningTestServer } from '@agl/testing';
import { seedRollout } from '../export/__fixtures__/seed-store';
import { fineTuneOpenAi, type FineTuneOpenAiOptions } from './fine-tune-openai';
import { findRunningJobRecord } from './job-record';

let dir: string;
let store: SqliteStore;
let ft: FineTuningTestServer;
let client: OpenAI;

const PROMPT = { resourceType: 'prompt_template' as const, template: 'Answer {question}' };
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-finetune-'));
  store = new SqliteStore({ path: join(dir, 'store.sqlite') });
  ft = await startFineTuningTestServer({ apiKey: 'sk-ft', advance: 'on-poll' });
  client = new OpenAI({ baseURL: ft.baseURL, apiKey: 'sk-ft', maxRetries: 0 });
  await store.addResources({
    main_llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'gpt-4o-mini' },
    system_prompt: PROMPT,
  });
});
afterEach(async () => {
  await ft.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Tasks T0..T{n-1}: a good rollout (answer 5, reward 1) and a bad one (answer 6, reward 0) each. */
async function seedTasks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await seedRollout(store, { taskId: `T${i}`, mode: 'train', answer: '5', answerToken: 401, reward: 1 });
    await seedRollout(store, { taskId: `T${i}`, mode: 'train', answer: '6', answerToken: 402, reward: 0 });
  }
}

function options(extra: Partial<FineTuneOpenAiOptions> = {}): FineTuneOpenAiOptions {
  return { store, client, baseModel: 'gpt-4o-mini', method: 'sft', suffix: 'calc', pollIntervalMs: 0, ...extra };
}

async function uploadedLines(): Promise<Array<Record<string, unknown>>> {
  const [file] = [...ft.files.values()];
  return file!.text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const resourcesCount = async () => (await store.queryResources({})).total;

describe('fineTuneOpenAi', () => {
  it('SFT: uploads the rewarded transcripts, runs the job and publishes exactly one new resources version', async () => {
    await seedTasks(10);
    const progress: string[] = [];
    const result = await fineTuneOpenAi(
      options({ selection: { minReward: 1 }, hyperparameters: { n_epochs: 3 }, onProgress: (l) => progress.push(l) }),
    );
    const lines = await uploadedLines();
    expect(lines).toHaveLength(10); // only the reward-1 rollouts
    for (const line of lines) {
      expect(line.tools).toEqual([
        { type: 'function', function: { name: 'add', description: 'Add two numbers', parameters: expect.any(Object) } },
      ]);
      expect(line.messages).toEqual([
        { role: 'system', content: 'Use the add tool.' },
        { role: 'user', content: expect.stringMatching(/^task T\d$/u) },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
        },
        { role: 'tool', content: '5', tool_call_id: 'call_1' },
        { role: 'assistant', content: '5' },
      ]);
    }
    const [job] = [...ft.jobs.values()];
    expect(job).toMatchObject({
      model: 'gpt-4o-mini',
      user_provided_suffix: 'calc',
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 3 } } },
      status: 'succeeded',
    });
    expect(result).toMatchObject({ status: 'succeeded', attached: false, nExamples: 10, trainLoss: 0.5 });
    expect(result.fineTunedModel).toBe(job!.fine_tuned_model);
    expect(await resourcesCount()).toBe(2);
    const latest = await store.getLatestResources();
    expect(latest?.resourcesId).toBe(result.published?.resourcesId);
    expect(latest?.resources.main_llm).toMatchObject({
      endpoint: 'http://127.0.0.1:9/v1',
      model: job!.fine_tuned_model,
    });
    expect(latest?.resources.system_prompt).toMatchObject(PROMPT);
    expect(progress.join('\n')).toMatch(/uploaded 10 sft examples[\s\S]*Fine-tuning job started[\s\S]*published/u);
    // the job record is closed: a rerun starts a new job rather than re-attaching
    expect(
      await findRunningJobRecord(store, {
        provider: 'openai',
        baseUrl: client.baseURL,
        baseModel: 'gpt-4o-mini',
        method: 'sft',
        suffix: 'calc',
      }),
    ).toBeNull();
  });

  it('DPO: one preferred / non-preferred pair per task, method dpo', async () => {
    await seedTasks(10);
    const result = await fineTuneOpenAi(options({ method: 'dpo', hyperparameters: { beta: 0.2 } }));
    const lines = await uploadedLines();
    expect(lines).toHaveLength(10);
    for (const line of lines) {
      expect(line.preferred_output).toEqual([{ role: 'assistant', content: '5' }]);
      expect(line.non_preferred_output).toEqual([{ role: 'assistant', content: '6' }]);
      expect((line.input as { messages: unknown[] }).messages).toHaveLength(4);
    }
    expect([...ft.jobs.values()][0]?.method).toEqual({ type: 'dpo', dpo: { hyperparameters: { beta: 0.2 } } });
    expect(result.status).toBe('succeeded');
    expect(await resourcesCount()).toBe(2);
  });

  it('a restart re-attaches to the running job instead of starting a second one', async () => {
    await seedTasks(10);
    const first = await fineTuneOpenAi(options({ wait: false }));
    expect(first).toMatchObject({ status: 'queued', attached: false }); // the poll moved it one state
    // Ctrl-C while following: the job keeps running and stays recorded
    const controller = new AbortController();
    controller.abort();
    const detached = await fineTuneOpenAi(options({ signal: controller.signal }));
    expect(detached).toMatchObject({ jobId: first.jobId, attached: true, status: 'detached' });
    expect([...ft.jobs.values()][0]?.status).not.toBe('cancelled');
    const second = await fineTuneOpenAi(options());
    expect(second).toMatchObject({ jobId: first.jobId, attached: true, status: 'succeeded' });
    expect(ft.jobs.size).toBe(1);
    expect(ft.files.size).toBe(1);
    expect(await resourcesCount()).toBe(2);
  });

  it('--cancel-on-exit cancels the job on Ctrl-C and publishes nothing', async () => {
    await seedTasks(10);
    const controller = new AbortController();
    const run = fineTuneOpenAi(
      options({
        cancelOnExit: true,
        signal: controller.signal,
        onProgress: (l) => l.startsWith('started') && controller.abort(),
      }),
    );
    await expect(run).rejects.toThrow(/cancelled.*Nothing was published/u);
    expect([...ft.jobs.values()][0]?.status).toBe('cancelled');
    expect(await resourcesCount()).toBe(1);
  });

  it('a failed job says why and publishes nothing; the next run starts a new job', async () => {
    await seedTasks(10);
    ft.failNextJob({ code: 'quota_exceeded', message: 'The organization is out of fine-tuning quota.' });
    await expect(fineTuneOpenAi(options())).rejects.toThrow(
      /job ftjob-\w+ failed: quota_exceeded: The organization is out of fine-tuning quota\. Nothing was published/u,
    );
    expect(await resourcesCount()).toBe(1);
    const retry = await fineTuneOpenAi(options());
    expect(retry).toMatchObject({ attached: false, status: 'succeeded' });
    expect(ft.jobs.size).toBe(2);
  });

  it('an invalid file is refused before any upload, naming the fix', async () => {
    await seedTasks(4);
    await expect(fineTuneOpenAi(options({ selection: { minReward: 1 } }))).rejects.toMatchObject({
      name: 'AGL_ValidationError',
      message: expect.stringMatching(/has 4 example\(s\); the provider needs at least 10\. Nothing was uploaded/u),
    });
    await expect(
      fineTuneOpenAi(options({ limits: { maxTokensPerExample: 50 }, selection: { minReward: 0 } })),
    ).rejects.toThrow(/line 1 holds about \d+ tokens, over the limit of 50/u);
    expect(ft.requests.filter((r) => r.method === 'POST')).toEqual([]);
    expect(await resourcesCount()).toBe(1);
  });

  it('a refused job create quotes OpenAI and names --provider tinker', async () => {
    await seedTasks(10);
    const refusing = await startFineTuningTestServer({
      apiKey: 'sk-ft',
      refuseJobs: {
        status: 403,
        message: 'Fine-tuning is not available for this organization.',
        code: 'not_available',
      },
    });
    try {
      const refusedClient = new OpenAI({ baseURL: refusing.baseURL, apiKey: 'sk-ft', maxRetries: 0 });
      const error = await fineTuneOpenAi(options({ client: refusedClient })).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'AGL_UserError' });
      expect((error as Error).message).toBe(
        'OpenAI refused the fine-tuning job (HTTP 403): Fine-tuning is not available for this organization. ' +
          'OpenAI takes no new self-serve fine-tuning jobs from 2027-01-06; train an open-weight model through Tinker instead: ' +
          'agl finetune --provider tinker --base-model Qwen/Qwen3-8B --method sft (set TINKER_API_KEY).',
      );
      expect(
        await findRunningJobRecord(store, {
          provider: 'openai',
          baseUrl: refusing.baseURL,
          baseModel: 'gpt-4o-mini',
          method: 'sft',
          suffix: 'calc',
        }),
      ).toBeNull();
      expect(await resourcesCount()).toBe(1);
    } finally {
      await refusing.close();
    }
  });
});
