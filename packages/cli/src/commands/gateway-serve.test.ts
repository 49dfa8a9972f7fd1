import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '@agl/store';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { type OpenAiTestServer, startOpenAiTestServer, toyTokenize } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin.ts', import.meta.url));

/** Starts `agl gateway serve …` as a real child process and resolves with its `AGL_GATEWAY_URL`. */
async function serve(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=@agl/source', '--import', 'tsx', BIN, 'gateway', 'serve', '--port', '0', ...args],
    {
      env: { ...process.env, AGL_STORE_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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

/** `GET /healthz` with a given `Host` header (fetch cannot set one). */
function healthWithHost(url: string, host: string): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path: '/healthz', headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

/** `POST /v1/chat/completions` through the gateway for the rollout's attempt, asking `7 * 6`. */
function askThroughGateway(
  gatewayUrl: string,
  rollout: { rolloutId: string; attempt: { attemptId: string } },
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gatewayUrl}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '7 * 6' }] }),
  });
}

describe('agl gateway serve', () => {
  let llm: OpenAiTestServer;
  let store: MemoryStore;
  let server: StoreServer;

  beforeAll(async () => {
    llm = await startOpenAiTestServer({ apiKey: 'sk-upstream' });
    store = new MemoryStore();
    server = await createStoreServer({ store, port: 0 });
  });
  afterAll(async () => {
    await llm.close();
    await server.close();
    await store.close();
  });

  it(
    'records calls into a store server given by --store-url, with the backend key from the environment, and stops on SIGTERM',
    { timeout: 120_000 },
    async () => {
      const gw = await serve(['--backend', llm.baseURL, '--store-url', server.url, '--token', 'gw-secret'], {
        AGL_BACKEND_API_KEY: 'sk-upstream',
      });
      try {
        const rollout = await store.startRollout({ input: null, mode: 'train' });
        const res = await askThroughGateway(gw.url, rollout, { authorization: 'Bearer gw-secret' });
        expect(res.status).toBe(200);
        expect(
          ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
        ).toBe('42');
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
      }
    },
  );

  it(
    'routes to --allow-backend origins without the backend key, and answers only loopback or --allowed-host names',
    { timeout: 120_000 },
    async () => {
      const other = await startOpenAiTestServer();
      const gw = await serve([
        '--backend',
        llm.baseURL,
        '--backend-api-key',
        'sk-upstream',
        '--store-url',
        server.url,
        '--allow-backend',
        new URL(other.baseURL).origin,
        '--allowed-host',
        'agl.internal',
      ]);
      try {
        expect(await healthWithHost(gw.url, 'rebind.attacker.example')).toBe(403);
        expect(await healthWithHost(gw.url, 'agl.internal:4748')).toBe(200);
        await store.addResources({ main_llm: { resourceType: 'llm', endpoint: other.baseURL, model: 'policy' } });
        const rollout = await store.startRollout({ input: null, mode: 'val' });
        const res = await askThroughGateway(gw.url, rollout);
        expect(res.status).toBe(200);
        expect(other.requests).toHaveLength(1);
        expect(other.requests[0]!.headers.authorization).toBeUndefined();
      } finally {
        gw.child.kill('SIGTERM');
        await once(gw.child, 'exit');
        await other.close();
      }
    },
  );
});
