// The hosted fine-tuning loop end to end, offline: a store of recorded support-bot conversations with user feedback →
// the README's `agl finetune … --wait` against the fine-tuning test server (official `openai` client) → one new
// resources version naming the tuned model → an agent run that calls it.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { startFineTuningServers, type FineTuningServers } from '@agl/testing';
import { litAgent, Trainer } from '@agl/trainer';
import { cli } from './__fixtures__/run-cli';
import { seedSupportTranscript } from './__fixtures__/seed-support-transcripts';
import { parseSince } from './finetune-command';

let dir: string;
let path: string;
let servers: FineTuningServers;

/** The README's fine-tune command lines (the block after the `fine-tune-commands` marker), as argv. */
async function readmeCommands(): Promise<string[][]> {
  const readme = await readFile(resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const block = readme.split('<!-- fine-tune-commands')[1]!.split('```sh\n')[1]!.split('```')[0]!;
  return block
    .split('\n')
    .filter((l) => l.startsWith('npx agl '))
    .map((l) => l.replace(/#.*$/u, '').trim().split(/\s+/u).slice(2));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-finetune-cli-'));
  path = join(dir, 'store.sqlite');
  servers = await startFineTuningServers({
    fineTuning: { apiKey: 'sk-ft', advance: 'on-poll' },
    llm: { respond: (r) => ({ content: `served by ${r.model}` }) },
  });
  vi.stubEnv('OPENAI_API_KEY', 'sk-ft');
  vi.stubEnv('OPENAI_BASE_URL', servers.ft.baseURL);
  const store = new SqliteStore({ path });
  await store.addResources({
    main_llm: { resourceType: 'llm', endpoint: servers.llm.baseURL, model: 'gpt-4o-mini', apiKey: 'sk-llm' },
    system_prompt: { resourceType: 'prompt_template', template: 'You are the support bot.' },
  });
  // The agent scored itself 0 on the good answers and 1 on the bad one; the users' feedback says otherwise and wins.
  for (let i = 0; i < 10; i++)
    await seedSupportTranscript(store, {
      order: `A${i}`,
      answer: `Order A${i} has shipped.`,
      agentReward: 0,
      feedback: 1,
    });
  await seedSupportTranscript(store, { order: 'B1', answer: 'I do not know.', agentReward: 1, feedback: 0 });
  await seedSupportTranscript(store, { order: 'C1', answer: 'Routed.', agentReward: 1, feedback: 1, agent: 'router' });
  await store.close();
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await servers.close();
  await rm(dir, { recursive: true, force: true });
});

describe('agl finetune (end to end)', () => {
  it('refuses too little data before uploading, naming the fix', async () => {
    const r = await cli(
      'finetune',
      '--base-model',
      'gpt-4o-mini',
      '--method',
      'sft',
      '--min-reward',
      '2',
      '--store',
      path,
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /sft training file has 0 example\(s\); the provider needs at least 10\. Nothing was uploaded/u,
    );
    expect(servers.ft.files.size).toBe(0);
  });

  it('README commands: fine-tune on the rated transcripts, publish the tuned model, and the next agent run uses it', async () => {
    const [finetune, list] = await readmeCommands();
    expect(finetune?.[0]).toBe('finetune');
    const r = await cli(...finetune!, '--store', path, '--poll-interval', '0');
    expect(r.err).not.toMatch(/error/u);
    expect(r.code).toBe(0);
    const [job] = [...servers.ft.jobs.values()];
    expect(job).toMatchObject({
      status: 'succeeded',
      model: 'gpt-4o-mini',
      method: { type: 'supervised', supervised: { hyperparameters: { n_epochs: 2 } } },
    });
    expect(r.out).toContain(`fine_tuned_model=${job!.fine_tuned_model}`);
    expect(r.err).toContain('The job has successfully completed');
    // the 10 support-bot conversations users rated 1; the one rated 0 (agent reward 1) and the router's are left out
    const lines = [...servers.ft.files.values()][0]!.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(10);
    expect(lines[0].messages.at(-1)).toEqual({ role: 'assistant', content: 'Order A0 has shipped.' });
    expect(lines[0].messages[2].tool_calls[0].function).toEqual({ name: 'lookup_order', arguments: '{"id":"A0"}' });
    expect(lines[0].tools[0].function.name).toBe('lookup_order');

    const store = new SqliteStore({ path });
    try {
      const versions = (await store.queryResources({})).items;
      expect(versions).toHaveLength(2);
      const latest = await store.getLatestResources();
      expect(r.out).toContain(`resources_id=${latest!.resourcesId}`);
      expect(latest!.resources.main_llm).toMatchObject({ endpoint: servers.llm.baseURL, model: job!.fine_tuned_model });
      expect(latest!.resources.system_prompt).toMatchObject({ template: 'You are the support bot.' });

      const answers: string[] = [];
      const agent = litAgent({
        rollout: async (task: { question: string }, resources) => {
          const main = resources.main_llm as { endpoint: string; model: string; apiKey: string | null };
          const client = new OpenAI({ baseURL: main.endpoint, apiKey: main.apiKey ?? 'none', maxRetries: 0 });
          const reply = await client.chat.completions.create({
            model: main.model,
            messages: [{ role: 'user', content: task.question }],
          });
          answers.push(reply.choices[0]?.message.content ?? '');
          return 1;
        },
      });
      await new Trainer({ store, quiet: true }).dev(agent as never, { dataset: [{ question: 'Where is order Z9?' }] });
      expect(answers).toEqual([`served by ${job!.fine_tuned_model}`]);
      const ran = (await store.queryRollouts({ modeIn: ['val'] })).items;
      expect(ran.map((x) => x.resourcesId)).toEqual([latest!.resourcesId]);
    } finally {
      await store.close();
    }
    expect(list?.slice(0, 2)).toEqual(['rollouts', 'list']);
    expect((await cli(...list!, '--store', path)).code).toBe(0);

    // the same command again: the job record is closed, so it starts a fresh job (and publishes one more version)
    const again = await cli(...finetune!, '--store', path, '--poll-interval', '0', '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ attached: false, status: 'succeeded' });
    expect(servers.ft.jobs.size).toBe(2);
  });

  it('--release: the tuned model becomes the candidate of a release, and the latest stays the baseline', async () => {
    const releasePath = join(dir, 'release.sqlite');
    const seeded = new SqliteStore({ path: releasePath });
    const baseline = await seeded.addResources({
      main_llm: { resourceType: 'llm', endpoint: servers.llm.baseURL, model: 'gpt-4o-mini', apiKey: 'sk-llm' },
    });
    for (let i = 0; i < 10; i++)
      await seedSupportTranscript(seeded, {
        order: `R${i}`,
        answer: `Order R${i} is on its way.`,
        agentReward: 1,
        feedback: 1,
      });
    await seeded.close();
    const r = await cli(
      ...['finetune', '--base-model', 'gpt-4o-mini', '--method', 'sft', '--wait', '--store', releasePath],
      ...['--poll-interval', '0', '--suffix', 'rel', '--release', '--shares', '0.2,1'],
    );
    expect(r.err).not.toMatch(/error/u);
    expect(r.code).toBe(0);
    const store = new SqliteStore({ path: releasePath });
    try {
      expect((await store.getLatestResources())!.resourcesId).toBe(baseline.resourcesId);
      const release = (await store.getRelease!(r.out.trim()))!;
      expect(release).toMatchObject({ state: 'running', baseline: baseline.resourcesId, shares: [0.2, 1] });
      const candidate = (await store.queryResources({})).items.find((v) => v.resourcesId === release.candidate)!;
      const job = [...servers.ft.jobs.values()].find((j) => j.fine_tuned_model?.includes('rel'));
      expect((candidate.resources.main_llm as { model: string }).model).toBe(job!.fine_tuned_model);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('parses --since as a date or a duration ago', () => {
    expect(parseSince('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1) / 1000);
    expect(parseSince('7d', 1_000_000)).toBe(1_000_000 - 7 * 86_400);
    expect(() => parseSince('last week')).toThrow(/--since got "last week"/u);
  });
});
