// `agl finetune --provider tinker … --wait` end to end, offline: a SQLite store of recorded support-bot conversations →
// Qwen3's real chat template and tokenizer → cross-entropy datums → forward_backward + optim_step on the Tinker stand-in
// (SDK 0.25 wire, a bigram model that really trains) → sampler weights → one new resources version naming them.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import { tokenizerForModel, type ChatTokenizer, type ForwardBackwardRequestFields, type TensorData } from '@agl/tinker';
import { cli } from './__fixtures__/run-cli';
import { seedSupportTranscript } from './__fixtures__/seed-support-transcripts';

let dir: string;
let tok: ChatTokenizer;
let server: TinkerStandIn;

async function seededStore(name: string): Promise<string> {
  const path = join(dir, `${name}.sqlite`);
  const store = new SqliteStore({ path });
  await store.addResources({
    main_llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'gpt-4o-mini', apiKey: 'sk-openai' },
    system_prompt: { resourceType: 'prompt_template', template: 'You are the support bot.' },
  });
  for (let i = 0; i < 3; i++) {
    await seedSupportTranscript(store, {
      order: `A${i}`,
      answer: `Order A${i} has shipped.`,
      agentReward: 0,
      feedback: 1,
    });
  }
  await seedSupportTranscript(store, { order: 'B1', answer: 'I do not know.', agentReward: 1, feedback: 0 });
  await store.close();
  return path;
}

async function resourceVersions(path: string) {
  const store = new SqliteStore({ path });
  try {
    return { all: (await store.queryResources({})).items, latest: await store.getLatestResources() };
  } finally {
    await store.close();
  }
}

const args = (path: string, ...more: string[]) => [
  'finetune',
  '--provider',
  'tinker',
  '--base-model',
  'Qwen/Qwen3-8B',
  '--method',
  'sft',
  '--min-reward',
  '1',
  '--lora-rank',
  '8',
  '--batch-size',
  '2',
  '--learning-rate',
  '0.05',
  '--store',
  path,
  '--wait',
  ...more,
];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-finetune-tinker-'));
  tok = await tokenizerForModel('Qwen/Qwen3-8B');
}, 120_000);
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function useStandIn() {
  server = await startTinkerStandIn({ apiKey: 'tml-test-key' });
  vi.stubEnv('TINKER_API_KEY', 'tml-test-key');
  vi.stubEnv('TINKER_BASE_URL', server.url);
}

describe('agl finetune --provider tinker', () => {
  it('trains on the transcripts with the prompt masked, one forward_backward + optim_step per step, and publishes once', async () => {
    await useStandIn();
    const path = await seededStore('clean');
    const before = await resourceVersions(path);
    const r = await cli(...args(path, '--steps', '3'));
    expect(r.err).not.toMatch(/error/i);
    expect(r.code).toBe(0);

    const fb = server.requestsTo('/api/v1/forward_backward');
    const optim = server.requestsTo('/api/v1/optim_step');
    expect(fb).toHaveLength(3);
    expect(optim).toHaveLength(3);
    expect(server.requestsTo('/api/v1/save_weights_for_sampler')).toHaveLength(1);
    // seq_ids alternate forward_backward, optim_step; the sampler save comes last.
    const order = server.requests
      .filter((q) => /forward_backward|optim_step|save_weights_for_sampler/.test(q.path))
      .map((q) => `${q.path.split('/').pop()}:${(q.body as { seq_id: number }).seq_id}`);
    expect(order).toEqual([
      'forward_backward:1',
      'optim_step:2',
      'forward_backward:3',
      'optim_step:4',
      'forward_backward:5',
      'optim_step:6',
      'save_weights_for_sampler:7',
    ]);
    expect(server.requestsTo('/api/v1/create_model')[0]!.body).toMatchObject({
      base_model: 'Qwen/Qwen3-8B',
      lora_config: { rank: 8 },
    });
    expect(optim[0]!.body).toMatchObject({ adam_params: { learning_rate: 0.05 } });

    // The datums: the three transcripts rated 1 (B1 is rated 0). Weight 1 on exactly the assistant replies: every
    // weighted run starts right after the template's generation prompt and ends with the end-of-turn token.
    const datums = fb.flatMap((q) => (q.body as ForwardBackwardRequestFields).data);
    expect(datums).toHaveLength(6); // batch 2 × 3 steps, cycling over 3 datums
    const seen = new Set<string>();
    for (const datum of datums) {
      const input = datum.model_input.chunks.flatMap((c) => c.tokens);
      const targets = (datum.loss_fn_inputs.target_tokens as TensorData).data;
      const weights = (datum.loss_fn_inputs.weights as TensorData).data;
      expect(targets).toHaveLength(input.length);
      expect(targets.slice(0, -1)).toEqual(input.slice(1));
      const tokens = [input[0]!, ...targets];
      const w = [0, ...weights];
      expect(new Set(w)).toEqual(new Set([0, 1]));
      const runs: { weight: number; ids: number[] }[] = [];
      tokens.forEach((id, i) => {
        const last = runs[runs.length - 1];
        if (last && last.weight === w[i]) last.ids.push(id);
        else runs.push({ weight: w[i]!, ids: [id] });
      });
      expect(runs[0]!.weight).toBe(0);
      const prompts = runs.filter((run) => run.weight === 0).map((run) => tok.decode(run.ids));
      const replies = runs.filter((run) => run.weight === 1).map((run) => tok.decode(run.ids));
      expect(replies).toHaveLength(2); // the tool call and the answer
      for (const text of prompts.slice(0, replies.length)) expect(text.endsWith('<|im_start|>assistant\n')).toBe(true);
      for (const text of replies) expect(text.endsWith('<|im_end|>')).toBe(true);
      expect(replies[0]).toMatch(
        /^<tool_call>\n\{"name": "lookup_order", "arguments": \{"id":"A\d"\}\}\n<\/tool_call><\|im_end\|>$/,
      );
      expect(replies[1]).toMatch(/Order A\d has shipped\.<\|im_end\|>$/);
      expect(prompts[0]).toContain('<|im_start|>system\nYou are the support bot.');
      expect(tok.decode(tokens)).not.toContain('I do not know.');
      seen.add(replies[1]!);
    }
    expect(seen.size).toBe(3);

    // Progress: step and loss per step, and the loss goes down on the real (bigram) model.
    const losses = [...r.err.matchAll(/step (\d)\/3 loss=([\d.]+)/g)].map((m) => Number(m[2]));
    expect(losses).toHaveLength(3);

    const samplerPath = /sampler_path=(\S+)/.exec(r.out)![1]!;
    expect(samplerPath).toMatch(/^tinker:\/\/[^/]+:train:0\/sampler_weights\/agl-sft-000003$/);
    const after = await resourceVersions(path);
    expect(after.all).toHaveLength(before.all.length + 1);
    // The LLM now names the sampler path at the Tinker base URL; the old endpoint's key does not travel with it.
    expect(after.latest!.resources.main_llm).toEqual({
      resourceType: 'llm',
      endpoint: server.url,
      model: samplerPath,
      apiKey: null,
      samplingParameters: {},
    });
    expect(after.latest!.resources.system_prompt).toEqual(before.latest!.resources.system_prompt);
    expect(server.checkpoints.get(samplerPath)?.kind).toBe('sampler_weights');
  }, 120_000);

  it('a run killed mid-way re-attaches: it resumes from the last saved state and publishes once', async () => {
    await useStandIn();
    const path = await seededStore('killed');
    const before = await resourceVersions(path);
    // The 4th forward_backward is refused as if the service had dropped the run: the process ends at step 4.
    server.failNext('/api/v1/forward_backward', 400, 1, 'session expired (injected)', 3);
    const first = await cli(...args(path, '--steps', '5', '--save-every', '2'));
    expect(first.code).toBe(1);
    expect(first.err).toContain('Tinker forward_backward failed: HTTP 400: session expired (injected)');
    expect(first.err).toMatch(/saved training state tinker:\/\/\S+\/weights\/agl-sft-state-000002/);
    expect((await resourceVersions(path)).all).toHaveLength(before.all.length);

    const second = await cli(...args(path, '--steps', '5', '--save-every', '2'));
    expect(second.code).toBe(0);
    const firstModel = server.requestsTo('/api/v1/create_model')[0]!;
    expect(second.err).toMatch(
      /resuming Tinker training run \S+:train:0 at step 2\/5 from tinker:\/\/\S+\/weights\/agl-sft-state-000002/,
    );
    expect(firstModel).toBeDefined();
    const load = server.requestsTo('/api/v1/load_weights');
    expect(load).toHaveLength(1);
    expect(load[0]!.body).toMatchObject({ optimizer: true, path: expect.stringMatching(/agl-sft-state-000002$/) });
    // Steps 3, 4, 5 ran again on the resumed model; one sampler save in all; one new resources version.
    const resumedSteps = [...second.err.matchAll(/step (\d)\/5 loss/g)].map((m) => Number(m[1]));
    expect(resumedSteps).toEqual([3, 4, 5]);
    expect(server.requestsTo('/api/v1/save_weights_for_sampler')).toHaveLength(1);
    const after = await resourceVersions(path);
    expect(after.all).toHaveLength(before.all.length + 1);
    expect(after.latest!.resources.main_llm).toMatchObject({
      model: expect.stringMatching(/^tinker:\/\/.+\/sampler_weights\/agl-sft-000005$/),
    });

    // The record is closed: a third run starts a new training run instead of re-attaching.
    const third = await cli(...args(path, '--steps', '1'));
    expect(third.code).toBe(0);
    expect(third.err).toMatch(/started Tinker training run/);
  }, 180_000);

  it('a process killed with SIGKILL mid-run re-attaches on the next run', async () => {
    await useStandIn();
    const path = await seededStore('sigkill');
    // From step 3 on, forward_backward answers 503, so the child backs off (0.5 s, 1 s, 2 s …) after saving step 2.
    server.failNext('/api/v1/forward_backward', 503, 1000, 'overloaded (injected)', 2);
    const child = spawn(
      process.execPath,
      [
        '--conditions=@agl/source',
        '--import',
        'tsx',
        'packages/cli/src/bin.ts',
        ...args(path, '--steps', '4', '--save-every', '2'),
      ],
      {
        cwd: resolve(import.meta.dirname, '../../../..'),
        env: { ...process.env, TINKER_API_KEY: 'tml-test-key', TINKER_BASE_URL: server.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    const closed = new Promise<number | null>((done) => child.on('close', done));
    await new Promise<void>((saved, failed) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (/saved training state \S+agl-sft-state-000002/.test(stderr)) saved();
      });
      void closed.then((code) => failed(new Error(`agl exited (${code}) before saving step 2: ${stderr}`)));
    });
    child.kill('SIGKILL');
    await closed;
    expect(stderr).not.toMatch(/step 3\/4/);
    server.failNext('/api/v1/forward_backward', 503, 0);

    const again = await cli(...args(path, '--steps', '4', '--save-every', '2'));
    expect(again.code).toBe(0);
    expect(again.err).toMatch(/resuming Tinker training run \S+ at step 2\/4 from tinker:\/\/\S+agl-sft-state-000002/);
    expect([...again.err.matchAll(/step (\d)\/4 loss/g)].map((m) => Number(m[1]))).toEqual([3, 4]);
    expect(server.requestsTo('/api/v1/save_weights_for_sampler')).toHaveLength(1);
  }, 180_000);

  it('--release publishes the sampler path as the candidate of a release; the latest stays the baseline', async () => {
    await useStandIn();
    const path = await seededStore('release');
    const before = await resourceVersions(path);
    const refused = await cli(...args(path, '--steps', '1', '--shares', '0.1,1'));
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/go with --release/);
    expect(server.requestsTo('/api/v1/forward_backward')).toHaveLength(0);

    const r = await cli(...args(path, '--steps', '1', '--release', '--shares', '0.1,1', '--min-requests', '5'));
    expect(r.err).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    const releaseId = r.out.trim();
    const after = await resourceVersions(path);
    expect(after.latest!.resourcesId).toBe(before.latest!.resourcesId);
    const store = new SqliteStore({ path });
    try {
      const release = (await store.getRelease!(releaseId))!;
      expect(release).toMatchObject({ state: 'running', baseline: before.latest!.resourcesId, shares: [0.1, 1] });
      const candidate = after.all.find((v) => v.resourcesId === release.candidate)!;
      const llm = candidate.resources.main_llm as { model: string; endpoint: string; apiKey?: string | null };
      expect(llm.model).toMatch(/^tinker:\/\/.+\/sampler_weights\//);
      expect(llm.endpoint).toBe(server.url);
      expect(llm.apiKey ?? null).toBeNull();
    } finally {
      await store.close();
    }
  }, 120_000);

  it('refuses DPO, naming what Tinker lacks', async () => {
    await useStandIn();
    const path = await seededStore('dpo');
    const r = await cli(
      'finetune',
      '--provider',
      'tinker',
      '--base-model',
      'Qwen/Qwen3-8B',
      '--method',
      'dpo',
      '--store',
      path,
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain("--provider tinker supports --method sft only: Tinker's built-in losses");
    expect(server.requests).toHaveLength(0);
  });

  it("runs the root README's commands as written", async () => {
    await useStandIn();
    const path = await seededStore('readme');
    const readme = await readFile(resolve(import.meta.dirname, '../../../../README.md'), 'utf8');
    const block = readme.split('<!-- tinker-commands')[1]!.split('```bash\n')[1]!.split('```')[0]!;
    const lines = block
      .split('\n')
      .filter((l) => l.startsWith('npx agl '))
      .map((l) => l.replace(/#.*$/u, '').trim().split(/\s+/u).slice(2));
    expect(lines.map((l) => l[0])).toEqual(['finetune', 'rollouts']);
    const r = await cli(...lines[0]!, '--store', path);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/step 2\/2 loss=/);
    expect(r.out).toMatch(/^sampler_path=tinker:\/\//m);
    expect(server.requestsTo('/api/v1/create_model')[0]!.body).toMatchObject({ lora_config: { rank: 32 } });
    expect((await cli(...lines[1]!, '--store', path)).code).toBe(0);
  }, 120_000);
});
