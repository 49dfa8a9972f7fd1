// `agl train <entry> --algorithm grpo --backend tinker` end to end, offline: the Tinker stand-in (SDK wire, a bigram
// model that really trains) over real HTTP, the command's own Tinker-mode gateway, an agent using the official openai
// client through its LLM resource, a real SQLite store, and a real SIGKILL of the CLI process between rounds.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import type { ForwardBackwardRequestFields, TensorData } from '@agl/tinker';
import { cli } from './__fixtures__/run-cli';

const KEY = 'tml-train-key';
const ENTRY = resolve(import.meta.dirname, '__fixtures__/tinker-train-entry.ts');
const ROOT = resolve(import.meta.dirname, '../../../..');
let dir: string;
let server: TinkerStandIn;

const args = (store: string, checkpointDir: string, ...more: string[]) => [
  'train',
  ENTRY,
  '--algorithm',
  'grpo',
  '--backend',
  'tinker',
  '--base-model',
  'Qwen/Qwen3-8B',
  '--rounds',
  '2',
  '--tasks-per-round',
  '2',
  '--group-size',
  '4',
  '--lora-rank',
  '8',
  '--learning-rate',
  '0.05',
  '--runners',
  '4',
  '--no-progress',
  '--store',
  store,
  '--checkpoint-dir',
  checkpointDir,
  ...more,
];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-train-tinker-'));
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function useStandIn() {
  server = await startTinkerStandIn({ apiKey: KEY });
  vi.stubEnv('TINKER_API_KEY', KEY);
  vi.stubEnv('TINKER_BASE_URL', server.url);
}

const dense = (t: unknown) => (t as TensorData).data;

describe('agl train --algorithm grpo --backend tinker', () => {
  it('refuses bad flag combinations before reaching Tinker, naming the flag and the fix', async () => {
    await useStandIn();
    const store = join(dir, 'flags.sqlite');
    const ckpt = join(dir, 'flags-ckpt');
    const cases: Array<[string[], RegExp]> = [
      [
        ['train', ENTRY, '--algorithm', 'grpo', '--store', store],
        /--algorithm grpo trains model weights: add --backend tinker --base-model NAME/,
      ],
      [
        ['train', ENTRY, '--algorithm', 'grpo', '--backend', 'tinker', '--store', store],
        /--backend tinker needs --base-model NAME/,
      ],
      [
        args(store, ckpt, '--loss', 'dpo'),
        /--loss dpo is not a Tinker policy-gradient loss; use --loss importance_sampling \(default\) or --loss ppo/,
      ],
      [
        [
          'train',
          ENTRY,
          '--algorithm',
          'apo',
          '--backend',
          'tinker',
          '--base-model',
          'Qwen/Qwen3-8B',
          '--store',
          store,
        ],
        /--backend tinker trains weights with --algorithm grpo, rloo or rejection-sampling; got --algorithm apo/,
      ],
      [['train', ENTRY, '--rounds', '3', '--store', store], /--rounds goes with --backend tinker/],
      [['train', ENTRY, '--val-every', '2', '--store', store], /--val-every goes with --backend tinker/],
      [args(store, ckpt, '--val-every', '-1'), /--val-every got "-1"; pass an integer ≥ 0/],
      [args(store, ckpt, '--max-steps-off-policy', '-1'), /--max-steps-off-policy got "-1"; pass an integer ≥ 0/],
      [args(store, ckpt, '--group-size', '0'), /--group-size got "0"; pass an integer ≥ 1/],
      [args(store, ckpt, '--agent-match', '('), /--agent-match "\(" is not a valid regular expression/],
      [args(store, ckpt, '--min-reward', '1'), /--min-reward goes with --algorithm rejection-sampling/],
      [
        ['train', ENTRY, '--algorithm', 'grpo', '--backend', 'openai', '--store', store],
        /--backend openai is not a weight-training backend; use --backend tinker/,
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(...argv);
      expect(r.code, argv.join(' ')).not.toBe(0);
      expect(r.err, argv.join(' ')).toMatch(message);
    }
    expect(server.requests).toHaveLength(0);
  }, 120_000);

  it('trains 2 rounds on asample’s exact ids and logprobs; a SIGKILLed run resumes at round 2 with load_weights', async () => {
    await useStandIn();
    const store = join(dir, 'grpo.sqlite');
    const ckpt = join(dir, 'grpo-ckpt');
    // Round 1's 8 samples go through; from round 2 on, asample answers 503 so the child is still sampling round 2
    // (retrying) when it is killed: the kill lands after round 1's saved state, before round 2 trains.
    server.failNext('/api/v1/asample', 503, 100_000, 'overloaded (injected)', 8);
    const child = spawn(
      process.execPath,
      ['--conditions=@agl/source', '--import', 'tsx', 'packages/cli/src/bin.ts', ...args(store, ckpt)],
      {
        cwd: ROOT,
        env: { ...process.env, TINKER_API_KEY: KEY, TINKER_BASE_URL: server.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    const closed = new Promise<number | null>((done) => child.on('close', done));
    await new Promise<void>((roundDone, failed) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (/grpo: round 1\/2 /.test(stderr)) roundDone();
      });
      void closed.then((code) => failed(new Error(`agl exited (${code}) before round 1 ended: ${stderr}`)));
    });
    child.kill('SIGKILL');
    await closed;
    expect(stderr).toMatch(
      /grpo: round 1\/2 mean reward [\d.]+, skipped groups \d+, loss -?[\d.]+, tokens \d+, [\d.]+ s/,
    );
    expect(stderr).not.toMatch(/round 2\/2/);
    expect(server.models.size).toBe(1);
    const model1 = [...server.models.keys()][0]!;
    const round1Sampler = `tinker://${model1}/sampler_weights/000001`;
    expect(server.checkpoints.get(round1Sampler)?.kind).toBe('sampler_weights');
    server.failNext('/api/v1/asample', 503, 0);

    // The same command again: it resumes at round 2 (load_weights of round 1's state), runs round 2 only.
    const again = await cli(...args(store, ckpt, '--json'));
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(/grpo: resuming at round 2\/2 from \S+ \(load_weights of the last saved state\)/);
    expect(again.err).toMatch(/grpo: round 2\/2 mean reward/);
    expect(again.err).not.toMatch(/round 1\/2/);
    const loads = server
      .requestsTo('/api/v1/load_weights')
      .map((q) => q.body as { model_id: string; path: string; optimizer: boolean });
    const model2 = [...server.models.keys()].find((id) => id !== model1)!;
    expect(loads).toEqual([
      expect.objectContaining({ model_id: model2, path: `tinker://${model1}/weights/000001`, optimizer: true }),
    ]);
    const summary = JSON.parse(again.out) as {
      tinker: { rounds: number; rollouts: number; tokens: number; samplerPath: string };
    };
    expect(summary.tinker).toMatchObject({
      rounds: 1,
      rollouts: 8,
      samplerPath: `tinker://${model2}/sampler_weights/000002`,
    });

    // Round 1 sampled the base model, round 2 only round 1's sampler path (8 samples each, no more).
    expect(server.sampled).toHaveLength(16);
    expect(server.sampled.slice(0, 8).every((s) => s.modelPath === null && s.baseModel === 'Qwen/Qwen3-8B')).toBe(true);
    expect(server.sampled.slice(8).every((s) => s.modelPath === round1Sampler)).toBe(true);

    // One forward_backward + optim_step per round; every datum trains on one asample's exact ids and logprobs.
    const fb = server.requestsTo('/api/v1/forward_backward');
    expect(fb).toHaveLength(2);
    expect(server.requestsTo('/api/v1/optim_step')).toHaveLength(2);
    fb.forEach((q, round) => {
      const pool = round === 0 ? server.sampled.slice(0, 8) : server.sampled.slice(8);
      const data = (q.body as ForwardBackwardRequestFields).data;
      expect(data.length).toBeGreaterThan(0);
      for (const datum of data) {
        const input = datum.model_input.chunks.flatMap((c) => c.tokens);
        const targets = dense(datum.loss_fn_inputs.target_tokens);
        const logprobs = dense(datum.loss_fn_inputs.logprobs);
        const advantages = dense(datum.loss_fn_inputs.advantages);
        const source = pool.find((s) => {
          const ids = [...s.prompt, ...s.result.sequences[0]!.tokens];
          return (
            JSON.stringify(ids.slice(0, -1)) === JSON.stringify(input) &&
            JSON.stringify(ids.slice(1)) === JSON.stringify(targets)
          );
        });
        expect(source, `a datum of round ${round + 1}`).toBeDefined();
        const P = source!.prompt.length;
        // asample's logprobs travel as float32 on the wire (what the client got), and so do the datum's.
        expect(logprobs.slice(P - 1)).toEqual(source!.result.sequences[0]!.logprobs!.map((x) => Math.fround(x)));
        expect(advantages.slice(0, P - 1).every((a) => a === 0)).toBe(true);
        expect(advantages.slice(P - 1).some((a) => a !== 0)).toBe(true);
      }
    });

    // A new resources version per round: round 2's rollouts ran with the version naming round 1's sampler path,
    // and the latest names round 2's.
    const records = (await readFile(join(ckpt, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { round: number; sampledFrom: string; resourcesId: string });
    expect(records.map((r) => r.round)).toEqual([1, 2]);
    const db = new SqliteStore({ path: store });
    try {
      const modelOf = async (id: string) =>
        ((await db.getResourcesById(id))!.resources.main_llm as { model: string }).model;
      expect(await modelOf(records[0]!.sampledFrom)).toBe('Qwen/Qwen3-8B');
      expect(await modelOf(records[0]!.resourcesId)).toBe(round1Sampler);
      expect(await modelOf(records[1]!.sampledFrom)).toBe(round1Sampler);
      expect(await modelOf(records[1]!.resourcesId)).toBe(`tinker://${model2}/sampler_weights/000002`);
      const latest = (await db.getLatestResources())!;
      expect(latest.resourcesId).toBe(records[1]!.resourcesId);
      expect(latest.resources.main_llm).toMatchObject({ resourceType: 'proxy_llm' });
      const round2 = (await db.queryRollouts({})).items.filter(
        (r) => (r.metadata as { round?: number }).round === 2 && r.resourcesId === records[1]!.sampledFrom,
      );
      expect(round2).toHaveLength(8);
    } finally {
      await db.close();
    }

    // Rerun once more: the run has finished; nothing is trained again.
    const done = await cli(...args(store, ckpt));
    expect(done.code).toBe(0);
    expect(done.err).toMatch(/already finished 2 rounds; nothing to do/);
    expect(server.requestsTo('/api/v1/forward_backward')).toHaveLength(2);
  }, 240_000);
  it('--val-every validates between rounds; --release makes the final sampler the candidate against the latest', async () => {
    await useStandIn();
    const store = join(dir, 'release.sqlite');
    const ckpt = join(dir, 'release-ckpt');
    const val = join(dir, 'val.json');
    await writeFile(val, JSON.stringify(['cats', 'owls']));
    const noneYet = await cli(...args(store, ckpt, '--release'));
    expect(noneYet.code).not.toBe(0);
    expect(noneYet.err).toMatch(
      /--release compares the trained winner with the latest resources, and none are published/,
    );
    // What serves today: the base model behind a long-lived Tinker-mode gateway.
    const served = 'http://127.0.0.1:9/v1';
    const db = new SqliteStore({ path: store });
    const before = await db.addResources({
      main_llm: { resourceType: 'llm', endpoint: served, model: 'Qwen/Qwen3-8B', samplingParameters: {} },
    });
    await db.close();

    const r = await cli(
      ...args(store, ckpt, '--val', val, '--val-every', '1', '--release', '--shares', '0.1,1', '--json'),
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/grpo: val reward [\d.]+ before training/);
    expect(r.err).toMatch(/grpo: round 1\/2 mean reward [\d.]+,.*, val reward [\d.]+, resources /);
    expect(r.err).toMatch(/grpo: round 2\/2 mean reward [\d.]+,.*, val reward [\d.]+, resources /);
    const out = JSON.parse(r.out) as {
      release: { id: string; baseline: string; candidate: string; shares: number[] };
      tinker: { samplerPath: string; validations: Array<{ round: number; reward: number }> };
    };
    expect(out.tinker.validations.map((v) => v.round)).toEqual([0, 1, 2]);
    // Validation rollouts: 2 val tasks before training and after each of the 2 rounds, 8 train rollouts per round.
    expect(server.sampled).toHaveLength(3 * 2 + 2 * 8);
    const model = [...server.models.keys()][0]!;
    expect(out.tinker.samplerPath).toBe(`tinker://${model}/sampler_weights/000002`);

    const db2 = new SqliteStore({ path: store });
    try {
      // The version that was latest before training is the latest again and the release's baseline.
      expect((await db2.getLatestResources())!.resourcesId).toBe(before.resourcesId);
      expect(out.release.baseline).toBe(before.resourcesId);
      expect(out.release.shares).toEqual([0.1, 1]);
      const release = (await db2.getRelease(out.release.id))!;
      expect(release.candidate).toBe(out.release.candidate);
      // The candidate names the final sampler path, at the served endpoint (the run's own gateway has closed).
      const candidate = (await db2.getResourcesById(out.release.candidate))!;
      expect(candidate.resources.main_llm).toMatchObject({
        resourceType: 'proxy_llm',
        model: out.tinker.samplerPath,
        endpoint: served,
      });
    } finally {
      await db2.close();
    }
  }, 240_000);
});
