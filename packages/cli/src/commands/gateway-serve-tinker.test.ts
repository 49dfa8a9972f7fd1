import { once } from 'node:events';
import { MemoryStore } from '@agl/store';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgl } from './__fixtures__/spawn-agl';

const KEY = 'tml-cli-secret-key';

const agl = spawnAgl;

describe('agl gateway serve --tinker', () => {
  let standIn: TinkerStandIn;
  let store: MemoryStore;
  let server: StoreServer;

  beforeAll(async () => {
    standIn = await startTinkerStandIn({ apiKey: KEY });
    store = new MemoryStore();
    server = await createStoreServer({ store, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    await standIn?.close();
  });

  it(
    'samples through Tinker with the base model’s chat template and records the sampled ids',
    { timeout: 120_000 },
    async () => {
      const gw = agl(
        [
          'gateway',
          'serve',
          '--port',
          '0',
          '--tinker',
          '--base-model',
          'Qwen/Qwen3-8B',
          '--store-url',
          server.url,
          '--max-tokens',
          '8',
        ],
        { TINKER_BASE_URL: standIn.url, TINKER_API_KEY: KEY },
      );
      try {
        const url = await new Promise<string>((resolve, reject) => {
          gw.child.stdout.on('data', () => {
            const match = /^AGL_GATEWAY_URL=(\S+)$/m.exec(gw.out());
            if (match) resolve(match[1]!);
          });
          gw.child.once('exit', (code) => reject(new Error(`agl gateway serve exited with ${code}: ${gw.err()}`)));
        });
        const rollout = await store.startRollout({ input: null, mode: 'val' });
        const client = new OpenAI({
          baseURL: `${url}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1`,
          apiKey: 'agent',
          maxRetries: 0,
        });
        const res = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
        expect(res.choices[0]!.message.role).toBe('assistant');
        const sent = standIn.requestsTo('/api/v1/asample').at(-1)!;
        expect(sent.headers['x-api-key']).toBe(KEY);
        const body = sent.body as {
          prompt: { chunks: { tokens: number[] }[] };
          sampling_params: { max_tokens: number };
        };
        expect(body.sampling_params.max_tokens).toBe(8);
        const [span] = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
        // `--token-ids` defaults to scoped with --tinker: a val rollout's span has the ids too.
        expect(span!.attributes.prompt_token_ids).toEqual(body.prompt.chunks.flatMap((c) => c.tokens));
        // <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n in Qwen3's vocabulary.
        expect(span!.attributes.prompt_token_ids).toEqual([151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198]);
        expect((span!.attributes.response_token_ids as number[]).length).toBe(res.usage!.completion_tokens);
      } finally {
        gw.child.kill('SIGTERM');
        await once(gw.child, 'exit');
      }
      expect(gw.err()).toContain('sampling through Tinker');
      expect(gw.err()).not.toContain(KEY);
    },
  );

  it('refuses Tinker flags without --tinker, and --tinker with --backend', { timeout: 60_000 }, async () => {
    const stray = agl(['gateway', 'serve', '--port', '0', '--memory', '--sampler', 'tinker://x/sampler_weights/y'], {});
    const [code] = (await once(stray.child, 'exit')) as [number];
    expect(code).not.toBe(0);
    expect(stray.err()).toContain('--sampler belongs to --tinker');
    const both = agl(
      ['gateway', 'serve', '--port', '0', '--memory', '--tinker', '--backend', 'http://127.0.0.1:9/v1'],
      {},
    );
    const [code2] = (await once(both.child, 'exit')) as [number];
    expect(code2).not.toBe(0);
    expect(both.err()).toContain('needs no --backend');
  });
});
