import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND_KEY, type GatewayFixture, startGatewayFixture } from '../__fixtures__/gateway-fixture';
import { startScriptedBackend } from '../__fixtures__/scripted-backend';
import { type Gateway, type GatewayOptions, startGateway } from '../server/gateway-server';

/** What the stand-in for an attacker's (or any other) listener received. */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A second 127.0.0.1 listener that records every request and answers with a "secret" chat completion. */
async function startRecorder(): Promise<{
  baseURL: string;
  origin: string;
  received: Received[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const backend = await startScriptedBackend((req, res, body) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'c',
        object: 'chat.completion',
        model: 'm',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'internal-admin-secret' }, finish_reason: 'stop' },
        ],
      }),
    );
  });
  return { ...backend, origin: new URL(backend.baseURL).origin, received };
}

/** A raw HTTP request: the path goes out byte for byte (no client-side URL normalisation) and `headers.host` is kept. */
function send(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname,
        port,
        path,
        method: options.method ?? 'GET',
        headers: { 'content-type': 'application/json', ...options.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'the prompt' }] });
const detailOf = (body: string): string => (JSON.parse(body) as { detail: string }).detail;

describe('issue 42 (gateway): what a hostile caller or a broken resource gets past', () => {
  let recorder: Awaited<ReturnType<typeof startRecorder>>;
  let fx: GatewayFixture;
  const call = (
    rolloutPath = `/rollout/${fx.rollout.rolloutId}/attempt/${fx.rollout.attempt.attemptId}/v1`,
  ): Promise<{ status: number; body: string }> =>
    send(fx.gateway.url, `${rolloutPath}/chat/completions`, { method: 'POST', body: chat });

  beforeAll(async () => {
    recorder = await startRecorder();
    fx = await startGatewayFixture();
  });
  afterAll(async () => {
    await fx.close();
    await recorder.close();
  });
  afterEach(() => {
    recorder.received.length = 0;
    fx.llm.requests.length = 0;
  });
  /** Another gateway on the fixture's store and backend, with other options. */
  const gatewayWith = (options: Partial<GatewayOptions>): Promise<Gateway> =>
    startGateway({
      store: fx.store,
      backend: fx.llm.baseURL,
      backendApiKey: BACKEND_KEY,
      port: 0,
      routeCacheTtlMs: 0,
      ...options,
    });

  describe('1. the backend key goes only where it was configured for', () => {
    // The later tests call the fixture's rollout, which routes by the latest resources: point them back at the backend.
    afterAll(() => fx.store.addResources({ main_llm: { resourceType: 'llm', endpoint: fx.llm.baseURL, model: 'm' } }));

    it('refuses an LLM resource naming another origin with a 403 naming the origin and the flag; that origin receives nothing', async () => {
      await fx.store.addResources({ main_llm: { resourceType: 'llm', endpoint: recorder.baseURL, model: 'm' } });
      const answer = await call();
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ error_type: 'backend_not_allowed' });
      expect(detailOf(answer.body)).toContain(recorder.origin);
      expect(detailOf(answer.body)).toContain(`--allow-backend ${recorder.origin}`);
      expect(recorder.received).toEqual([]);
    });

    it('refuses an endpoint with a fragment (the appended path would vanish into it), even on an allowed origin', async () => {
      const gw = await gatewayWith({ allowBackends: [recorder.origin] });
      try {
        await fx.store.addResources({
          main_llm: { resourceType: 'llm', endpoint: `${recorder.origin}/internal/admin?secret=1#`, model: 'm' },
        });
        const rollout = await fx.store.startRollout({ input: null, mode: 'train' });
        const answer = await send(
          gw.url,
          `/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1/chat/completions`,
          { method: 'POST', body: chat },
        );
        expect(answer.status).toBe(400);
        expect(answer.body).not.toContain('internal-admin-secret');
        expect(detailOf(answer.body)).toContain('fragment');
        expect(recorder.received).toEqual([]);
      } finally {
        await gw.close();
      }
    });

    it('calls an allowed origin with the resource’s own key or none, never the backend key, below the endpoint’s path', async () => {
      const gw = await gatewayWith({ allowBackends: [recorder.origin] });
      try {
        const rollout = await fx.store.startRollout({ input: null, mode: 'train' });
        await fx.store.updateRollout(rollout.rolloutId, { resourcesId: null }); // follows the latest resources
        const path = `/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1/chat/completions`;
        await fx.store.addResources({
          main_llm: { resourceType: 'llm', endpoint: `${recorder.origin}/internal/admin?secret=1`, model: 'm' },
        });
        expect((await send(gw.url, path, { method: 'POST', body: chat })).status).toBe(200);
        await fx.store.addResources({
          main_llm: { resourceType: 'llm', endpoint: recorder.baseURL, model: 'm', apiKey: 'sk-resource-own' },
        });
        expect((await send(gw.url, path, { method: 'POST', body: chat })).status).toBe(200);
        expect(recorder.received.map((r) => [r.url, r.headers.authorization])).toEqual([
          ['/internal/admin/chat/completions?secret=1', undefined],
          ['/v1/chat/completions', 'Bearer sk-resource-own'],
        ]);
        expect(JSON.stringify(recorder.received)).not.toContain(BACKEND_KEY);
      } finally {
        await gw.close();
      }
    });

    it('still sends the backend key to the configured backend’s origin, and ignores a resource pointing back at the gateway', async () => {
      await fx.store.addResources({
        main_llm: { resourceType: 'llm', endpoint: `http://localhost:${fx.gateway.port}/v1`, model: 'loop' },
      });
      expect((await call()).status).toBe(200);
      expect(fx.llm.requests.at(-1)!.headers.authorization).toBe(`Bearer ${BACKEND_KEY}`);
      expect(recorder.received).toEqual([]);
    });
  });

  describe('2. the models id never climbs out of the backend’s base path', () => {
    let gw: Gateway;
    let backend: Awaited<ReturnType<typeof startRecorder>>;
    beforeAll(async () => {
      backend = await startRecorder();
      gw = await gatewayWith({ backend: backend.baseURL });
    });
    afterEach(() => {
      backend.received.length = 0;
    });
    afterAll(async () => {
      await gw.close();
      await backend.close();
    });

    it.each(['..\\..\\admin\\keys', '%2e%2e%5c%2e%2e%5cadmin%5ckeys', '..%2F..%2Fadmin%2Fkeys', '%2E%2E', '..'])(
      'GET /v1/models/%s',
      async (id) => {
        const answer = await send(gw.url, `/v1/models/${id}`);
        expect(answer.status).not.toBe(500);
        for (const r of backend.received) expect(r.url.startsWith('/v1/models/')).toBe(true);
        expect(backend.received.some((r) => r.url.includes('/admin'))).toBe(false);
      },
    );
  });

  describe('4. bodies cost what they weigh', () => {
    it('answers 413 for a body of too many values while it is still being sent, and the backend receives nothing', async () => {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { hostname, port } = new URL(fx.gateway.url);
        const req = request(
          {
            hostname,
            port,
            path: '/v1/chat/completions',
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': String(32 * 1024 * 1024) },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => {
              resolve({ status: res.statusCode ?? 0, body });
              req.destroy();
            });
          },
        );
        req.on('error', reject);
        // 2.3 MiB of the 32 MiB announced (800,000 empty objects); the request is never finished.
        req.write(`{"junk":[${'{},'.repeat(800_000)}`);
      });
      expect(answer.status).toBe(413);
      expect(detailOf(answer.body)).toContain('200,000 JSON values');
      expect(fx.llm.requests).toEqual([]);
    });

    it('answers 413 at once for a declared length over the limit, and 400 for too many messages', async () => {
      const small = await gatewayWith({ maxBodyBytes: 1024 });
      try {
        const over = await send(small.url, '/v1/chat/completions', {
          method: 'POST',
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(2000) }] }),
        });
        expect(over.status).toBe(413);
      } finally {
        await small.close();
      }
      const messages = Array.from({ length: 20_001 }, () => ({ role: 'user', content: 'hi' }));
      const many = await send(fx.gateway.url, '/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ model: 'm', messages }),
      });
      expect(many.status).toBe(400);
      expect(detailOf(many.body)).toContain('at most 20000');
      expect(fx.llm.requests).toEqual([]);
    });

    it('takes at most 16 KiB on the control routes', async () => {
      const answer = await send(fx.gateway.url, '/proxy/pause', {
        method: 'POST',
        body: JSON.stringify({ reason: 'x'.repeat(20 * 1024) }),
      });
      expect(answer.status).toBe(413);
      expect(fx.gateway.state().paused).toBe(false);
    });
  });

  describe('5. loopback means loopback', () => {
    it('answers 403 to a Host that does not name loopback, on every route', async () => {
      for (const path of ['/healthz', '/v1/models', '/proxy/state']) {
        const answer = await send(fx.gateway.url, path, { headers: { host: 'rebind.attacker.example' } });
        expect(answer.status).toBe(403);
        expect(JSON.parse(answer.body)).toMatchObject({ error_type: 'host_not_allowed' });
        expect(detailOf(answer.body)).toContain('--allowed-host');
      }
      expect(fx.llm.requests).toEqual([]);
      for (const host of ['localhost', `127.0.0.1:${fx.gateway.port}`, `[::1]:${fx.gateway.port}`]) {
        expect((await send(fx.gateway.url, '/healthz', { headers: { host } })).status).toBe(200);
      }
    });

    it('answers the names given in allowedHosts', async () => {
      const gw = await gatewayWith({ allowedHosts: ['agl.internal'] });
      try {
        expect((await send(gw.url, '/healthz', { headers: { host: `agl.internal:${gw.port}` } })).status).toBe(200);
        expect((await send(gw.url, '/healthz', { headers: { host: 'rebind.attacker.example' } })).status).toBe(403);
      } finally {
        await gw.close();
      }
    });
  });

  describe('6. odd rollout and attempt ids', () => {
    it.each([
      ['/rollout/../attempt/at-1/v1', '".."'],
      ['/rollout/%2e%2e/attempt/at-1/v1', '".."'],
      ['/rollout/ro-1/attempt/a%5Cb/v1', '"a\\\\b"'],
      ['/proxy/rollout/ro-1/attempt/./mode/train/openai/v1', '"."'],
    ])('%s is a 400 naming the id, and the backend receives nothing', async (path, named) => {
      const answer = await call(path);
      expect(answer.status).toBe(400);
      expect(detailOf(answer.body)).toContain(named);
      expect(fx.llm.requests).toEqual([]);
    });

    it('refuses an odd id in the x-rollout-id header', async () => {
      const answer = await send(fx.gateway.url, '/v1/chat/completions', {
        method: 'POST',
        body: chat,
        headers: { 'x-rollout-id': '..', 'x-attempt-id': 'at-1' },
      });
      expect(answer.status).toBe(400);
      expect(detailOf(answer.body)).toContain('".."');
    });

    it('checks that the attempt exists before calling the backend', async () => {
      const answer = await call(`/rollout/${fx.rollout.rolloutId}/attempt/at-unknown/v1`);
      expect(answer.status).toBe(404);
      expect(detailOf(answer.body)).toContain('at-unknown');
      expect(fx.llm.requests).toEqual([]);
      // An older attempt of the rollout is still accepted.
      await fx.store.startAttempt(fx.rollout.rolloutId);
      expect((await call()).status).toBe(200);
    });
  });
});
