import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from '@agl/store';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTinyLlm } from './tiny-command';
import { spawnAgl } from './__fixtures__/spawn-agl';

const KEY = 'tml-tiny-cli-key';
// A small shape so a fresh v0 starts fast on a busy 2-core machine.
const SHAPE = ['--d-model', '32', '--layers', '2', '--heads', '2', '--d-ff', '64', '--max-seq-len', '160'];

const agl = spawnAgl;

describe('agl tiny serve', () => {
  let dir: string;
  let store: MemoryStore;
  let storeServer: StoreServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agl-tiny-cli-'));
    store = new MemoryStore();
    storeServer = await createStoreServer({ store, port: 0 });
  });
  afterAll(async () => {
    await storeServer?.close();
    await store?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    '--tinker answers the Tinker API; `agl gateway serve --tinker --base-model agl-tiny@v0` samples it with its own template; SIGTERM stops both',
    { timeout: 240_000 },
    async () => {
      const tiny = agl(['tiny', 'serve', '--tinker', '--port', '0', '--dir', dir, '--token', KEY, ...SHAPE]);
      let gw: ReturnType<typeof agl> | undefined;
      try {
        const tinkerUrl = await tiny.line('TINKER_BASE_URL');
        const tinyUrl = await tiny.line('AGL_TINY_URL');
        const headers = { 'x-api-key': KEY };
        const health = await fetch(`${tinkerUrl}/api/v1/healthz`, { headers });
        expect(health.status).toBe(200);
        const caps = (await (await fetch(`${tinkerUrl}/api/v1/get_server_capabilities`, { headers })).json()) as {
          supported_models: Array<{ model_name: string }>;
        };
        expect(caps.supported_models.map((m) => m.model_name)).toEqual(['agl-tiny', 'agl-tiny@v0']);
        const tok = (await (await fetch(`${tinkerUrl}/api/v1/tokenizer?model=agl-tiny@v0`, { headers })).json()) as {
          tokenizer_id: string;
          tokenizer_config: { chat_template: string };
        };
        expect(tok.tokenizer_id).toMatch(/^agl-tiny\/\d+-[0-9a-f]{12}$/);
        expect(tok.tokenizer_config.chat_template).toContain('<|call|>');

        gw = agl(
          [
            'gateway',
            'serve',
            '--port',
            '0',
            '--tinker',
            '--base-model',
            'agl-tiny@v0',
            '--store-url',
            storeServer.url,
            '--max-tokens',
            '6',
          ],
          { TINKER_BASE_URL: tinkerUrl, TINKER_API_KEY: KEY },
        );
        const gatewayUrl = await gw.line('AGL_GATEWAY_URL');
        const messages = [
          { role: 'system' as const, content: 'Answer with a number.' },
          { role: 'user' as const, content: 'What is 12 + 30?' },
        ];
        const tools = [
          {
            type: 'function' as const,
            function: { name: 'calc', parameters: { type: 'object', properties: { e: { type: 'string' } } } },
          },
        ];
        const rollout = await store.startRollout({ input: null, mode: 'train' });
        const client = new OpenAI({
          baseURL: `${gatewayUrl}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1`,
          apiKey: 'agent',
          maxRetries: 0,
        });
        const res = await client.chat.completions.create({ model: 'm', messages, tools, temperature: 0 });
        expect(res.choices[0]!.message.role).toBe('assistant');
        const own = (await new OpenAI({ baseURL: `${tinyUrl}/v1`, apiKey: KEY, maxRetries: 0 }).chat.completions.create(
          // @ts-expect-error vLLM extension
          { model: 'agl-tiny@v0', messages, tools, max_tokens: 1, return_token_ids: true },
        )) as unknown as { prompt_token_ids: number[] };
        const [span] = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
        expect(span!.attributes.prompt_token_ids).toEqual(own.prompt_token_ids);
        expect((span!.attributes.response_token_ids as number[]).length).toBe(res.usage!.completion_tokens);
      } finally {
        if (gw) {
          gw.child.kill('SIGTERM');
          await once(gw.child, 'exit');
        }
        tiny.child.kill('SIGTERM');
        const [code] = (await once(tiny.child, 'exit')) as [number | null];
        expect(code).toBe(0);
      }
      expect(tiny.err()).toContain('agl tiny: SIGTERM received');
      expect(tiny.err()).toContain('agl tiny: stopped cleanly.');
      expect(tiny.err()).not.toContain(KEY);
    },
  );

  it('names the package to install when @agl/tiny-llm is absent', async () => {
    const missing = Object.assign(new Error("Cannot find package '@agl/tiny-llm'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(loadTinyLlm(() => Promise.reject(missing))).rejects.toThrow(/npm install @agl\/tiny-llm/);
    const other = new Error('wasm failed');
    await expect(loadTinyLlm(() => Promise.reject(other))).rejects.toBe(other);
    expect(typeof (await loadTinyLlm()).startTinyServer).toBe('function');
  });
});
