// `agl finetune --provider tinker --base-model agl-tiny@v0` against the embedded policy's Tinker API (@agl/tiny-llm's
// `startTinyServer({ tinker: true })`, a real transformer in a worker thread, over real HTTP): the tokenizer and chat
// template come from the server (get_info → tokenizer), the steps really train it, and one resources version names
// the sampler path.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { startTinyServer, type TinyServer } from '@agl/tiny-llm';
import { cli } from './__fixtures__/run-cli';
import { seedSupportTranscript } from './__fixtures__/seed-support-transcripts';

const KEY = 'tml-tiny-finetune';
let dir: string;
let tiny: TinyServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-finetune-tiny-'));
  // A small shape so v0 starts fast on a busy 2-core machine; long enough for a support transcript.
  tiny = await startTinyServer({
    weightsDir: join(dir, 'weights'),
    init: { config: { dModel: 32, nLayers: 2, nHeads: 2, dFF: 64, maxSeqLen: 512 }, seed: 7 },
    tinker: true,
    token: KEY,
    tinkerLongPollMs: 200,
  });
}, 120_000);
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await tiny?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('agl finetune --provider tinker against the embedded policy', () => {
  it('trains agl-tiny@v0 with the server’s own tokenizer: the loss goes down, one version names the sampler path', async () => {
    const path = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path });
    await store.addResources({
      main_llm: { resourceType: 'llm', endpoint: 'http://127.0.0.1:9/v1', model: 'agl-tiny@v0' },
    });
    for (let i = 0; i < 2; i++)
      await seedSupportTranscript(store, {
        order: `A${i}`,
        answer: `Order A${i} shipped.`,
        agentReward: 1,
        feedback: 1,
      });
    const before = (await store.queryResources({})).items.length;
    await store.close();
    vi.stubEnv('TINKER_API_KEY', KEY);
    vi.stubEnv('TINKER_BASE_URL', tiny.tinkerUrl!);

    const r = await cli(
      'finetune',
      '--provider',
      'tinker',
      '--base-model',
      'agl-tiny@v0',
      '--method',
      'sft',
      '--min-reward',
      '1',
      '--lora-rank',
      '8',
      '--batch-size',
      '2',
      '--learning-rate',
      '0.01',
      '--steps',
      '6',
      '--store',
      path,
      '--wait',
    );
    expect(r.code, r.err).toBe(0);
    const losses = [...r.err.matchAll(/step (\d)\/6 loss=([\d.]+)/g)].map((m) => Number(m[2]));
    expect(losses).toHaveLength(6);
    expect(losses.every((x) => Number.isFinite(x) && x > 0)).toBe(true);
    // The same two datums every step: the loss falls step after step as the policy learns them.
    losses.slice(1).forEach((loss, i) => expect(loss, `step ${i + 2}`).toBeLessThan(losses[i]!));
    expect(losses[5]!).toBeLessThan(losses[0]! * 0.9);
    // agl-tiny is no built-in tokenizer family: the datums were tokenized with the server's own tokenizer.
    expect(r.err).toMatch(/2 datums from 2 transcripts/);

    const samplerPath = /sampler_path=(\S+)/.exec(r.out)![1]!;
    expect(samplerPath).toMatch(/^tinker:\/\/.+\/sampler_weights\//);
    const after = new SqliteStore({ path });
    try {
      expect((await after.queryResources({})).items).toHaveLength(before + 1);
      expect((await after.getLatestResources())!.resources.main_llm).toMatchObject({
        endpoint: tiny.tinkerUrl,
        model: samplerPath,
      });
    } finally {
      await after.close();
    }
  }, 240_000);
});
