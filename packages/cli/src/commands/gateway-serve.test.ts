import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { type OpenAiTestServer, startOpenAiTestServer, toyTokenize } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin.ts', import.meta.url));

/** Starts `agl gateway serve …` as a real child process and resolves with its `AGL_GATEWAY_URL`. */
async function serve(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['--conditions=@agl/source', '--import', 'tsx', BIN, 'gateway', 'serve', '--port', '0', ...args], {
    env: { ...process.env, AGL_STORE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /^AGL_GATEWAY_URL=(\S+)$/m.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`agl gateway serve exited with ${code}: ${err}`)));
  });
  return { child, url, stderr: () => err };
}

describe('agl gateway serve', () => {
  let llm: OpenAiTestServer;

  beforeAll(async () => {
    llm = await startOpenAiTestServer({ apiKey: 'sk-upstream' });
  });
  afterAll(() => llm.close());

  it('records calls into a store server given by --store-url, with the backend key from the environment, and stops on SIGTERM', { timeout: 120_000 }, async () => {
    const store = new MemoryStore();
    const server = await createStoreServer({ store, port: 0 });
    const gw = await serve(['--backend', llm.baseURL, '--store-url', server.url, '--token', 'gw-secret'], { AGL_BACKEND_API_KEY: 'sk-upstream' });
    try {
      const rollout = await store.startRollout({ input: null, mode: 'train' });
      const res = await fetch(`${gw.url}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer gw-secret', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '7 * 6' }] }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('42');
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      expect(spans).toHaveLength(1);
      expect(spans[0]!.attributes.response_token_ids).toEqual(toyTokenize('42'));
      expect((await fetch(`${gw.url}/v1/models`)).status).toBe(401);
    } finally {
      gw.child.kill('SIGTERM');
      const [code] = (await once(gw.child, 'exit')) as [number | null];
      expect(code).toBe(0);
      expect(gw.stderr()).toContain('stopped cleanly');
      expect(gw.stderr()).not.toContain('sk-upstream');
      await server.close();
      await store.close();
    }
  });
});
