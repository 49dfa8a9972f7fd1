import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '@agl/core/errors';
import type { LightningStore } from '@agl/core/store';
import { StoreClient } from '@agl/client';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer, type StoreServerOptions } from './index';

/** Issue 42, store server: one test per finding, through real HTTP on 127.0.0.1. */

const open: Array<{ server: StoreServer; store: LightningStore }> = [];
afterEach(async () => {
  for (const { server, store } of open.splice(0)) {
    await server.close();
    await store.close();
  }
});

async function start(options: Omit<StoreServerOptions, 'store'> = {}, store: LightningStore = new MemoryStore()) {
  const server = await createStoreServer({ store, port: 0, ...options });
  open.push({ server, store });
  return { server, store };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> | null;
}

/** A raw HTTP request: the path is sent as written (no `..` folding) and `Host` can be anything. */
function raw(
  server: StoreServer,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> | null = null;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const items = (item: string, count: number): string => `${`${item},`.repeat(count - 1)}${item}`;

describe('finding 3: OTLP bodies cost what they weigh', () => {
  it('refuses a gzip body of many empty spans (JSON) with a 413 before converting them', async () => {
    const { server } = await start();
    const body = gzipSync(`{"resourceSpans":[{"scopeSpans":[{"spans":[${items('{}', 500_000)}]}]}]}`);
    const res = await raw(server, 'POST', '/v1/traces', {
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
      body,
    });
    expect(res.status).toBe(413);
    expect(res.json?.message).toMatch(/more than 150000 values.*split the batch/);
  });

  it('refuses a protobuf body of more spans than the limit with a 413 as soon as it reads one too many', async () => {
    const { server } = await start({ maxSpansPerRequest: 10 });
    // ResourceSpans { ScopeSpans { 50 empty spans } }: tags 0x0a / 0x12 / 0x12 with one-byte lengths.
    const spans = Buffer.alloc(100, Buffer.from([0x12, 0x00]));
    const scope = Buffer.concat([Buffer.from([0x12, spans.length]), spans]);
    const body = Buffer.concat([Buffer.from([0x0a, scope.length]), scope]);
    const res = await raw(server, 'POST', '/v1/traces', {
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/protobuf/);
  });

  it('refuses an inflated body past the limit with a 413', async () => {
    const { server } = await start({ bodyLimit: 1024 * 1024 });
    const body = gzipSync(Buffer.alloc(2 * 1024 * 1024));
    const res = await raw(server, 'POST', '/v1/traces', {
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
      body,
    });
    expect(res.status).toBe(413);
  });
});

describe('finding 4: search, update and control routes take small bodies, counted before parsing', () => {
  /** A rollout search whose body holds `count` empty objects (3 bytes and 1 value each). */
  const searchWithJunk = async (count: number) => {
    const { server } = await start();
    return raw(server, 'POST', '/v1/agl/rollouts/search', {
      headers: JSON_TYPE,
      body: `{"junk":[${items('{}', count)}]}`,
    });
  };

  it('refuses a 2 MiB search body with a 413 (the control routes take 1 MiB)', async () => {
    const res = await searchWithJunk(700_000);
    expect(res.status).toBe(413);
    expect(res.json?.detail).toMatch(/this route's limit of 1048576 bytes/);
  });

  it('refuses a body of more values than the limit with a 413 before JSON.parse', async () => {
    const res = await searchWithJunk(300_000);
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({
      error_type: 'AGL_PayloadTooLargeError',
      detail: expect.stringMatching(/more than 150000 values/),
    });
  });

  it('refuses a span batch of more spans than the limit with a 413', async () => {
    const { server } = await start({ maxSpansPerRequest: 10 });
    const res = await raw(server, 'POST', '/v1/agl/spans/batch', {
      headers: JSON_TYPE,
      body: `{"spans":[${items('{}', 11)}]}`,
    });
    expect(res.status).toBe(413);
    expect(res.json?.detail).toMatch(/11 spans.*limit is 10/);
  });
});

describe('finding 5: a loopback server answers only loopback Host names', () => {
  it('refuses a rebound Host with a 403 naming --allowed-host, and answers loopback names', async () => {
    const { server } = await start();
    const refused = await raw(server, 'GET', '/v1/agl/resources/latest', {
      headers: { host: 'rebind.attacker.example' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({
      error_type: 'AGL_HostNotAllowedError',
      detail: expect.stringMatching(/--allowed-host/),
    });
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`, 'localhost']) {
      expect((await raw(server, 'GET', '/v1/agl/health', { headers: { host } })).status).toBe(200);
    }
  });

  it('answers the names given in allowedHosts', async () => {
    const { server } = await start({ allowedHosts: ['agl.internal'] });
    expect(
      (await raw(server, 'GET', '/v1/agl/health', { headers: { host: `agl.internal:${server.port}` } })).status,
    ).toBe(200);
    expect((await raw(server, 'GET', '/v1/agl/health', { headers: { host: 'other.internal' } })).status).toBe(403);
  });
});

describe('finding 6: CORS, secrets, forbidden names and odd ids', () => {
  it("with --cors-origin '*' never sends Allow-Credentials and never allows the null origin", async () => {
    const { server } = await start({ corsOrigin: '*' });
    const any = await raw(server, 'GET', '/v1/agl/health', { headers: { origin: 'http://page.example' } });
    expect(any.headers['access-control-allow-origin']).toBe('http://page.example');
    expect(any.headers['access-control-allow-credentials']).toBeUndefined();
    const nul = await raw(server, 'GET', '/v1/agl/health', { headers: { origin: 'null' } });
    expect(nul.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await raw(server, 'OPTIONS', '/v1/agl/resources/latest', {
      headers: {
        origin: 'http://page.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-agl-reveal-secrets',
      },
    });
    expect(String(preflight.headers['access-control-allow-headers'] ?? '')).not.toMatch(/x-agl-reveal-secrets/);
    await expect(start({ corsOrigin: ['http://localhost:5173', 'null'] })).rejects.toThrow(/null origin/);
  });

  it('masks resource API keys on every route unless the caller asks with x-agl-reveal-secrets: 1 (and the token)', async () => {
    const { server } = await start({ token: 'tok' });
    const auth = { ...JSON_TYPE, authorization: 'Bearer tok' };
    const llm = JSON.stringify({
      main: { resource_type: 'llm', endpoint: 'http://127.0.0.1:1/v1', model: 'm', api_key: 'sk-secret-123456' },
    });
    const added = await raw(server, 'POST', '/v1/agl/resources', { headers: auth, body: llm });
    const updated = await raw(server, 'POST', '/v1/agl/resources/rs-fixed', { headers: auth, body: llm });
    const id = String(added.json?.resources_id);
    const answers = [
      added,
      updated,
      await raw(server, 'GET', '/v1/agl/resources/latest', { headers: auth }),
      await raw(server, 'GET', `/v1/agl/resources/${id}`, { headers: auth }),
      await raw(server, 'GET', '/v1/agl/resources', { headers: auth }),
      await raw(server, 'GET', '/v1/agl/ext/resources', { headers: auth }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(300);
      const text = JSON.stringify(answer.json);
      expect(text).not.toContain('sk-secret-123456');
      expect(text).toContain('••••3456');
    }
    const reveal = { ...auth, 'x-agl-reveal-secrets': '1' };
    const clear = await raw(server, 'GET', '/v1/agl/resources/latest', { headers: reveal });
    expect(JSON.stringify(clear.json)).toContain('sk-secret-123456');
    expect(
      (await raw(server, 'GET', '/v1/agl/resources/latest', { headers: { 'x-agl-reveal-secrets': '1' } })).status,
    ).toBe(401);
    const client = new StoreClient({ url: server.url, token: 'tok', retryDelays: [] });
    const latest = await client.getLatestResources();
    expect(latest?.resources.main).toMatchObject({ apiKey: 'sk-secret-123456' });
    await client.close();
  });

  it('refuses a __proto__ resource name with a 422 that names it, over HTTP and in process', async () => {
    const { server, store } = await start();
    await store.addResources({ keep: { resourceType: 'prompt_template', template: 'hi', engine: 'f-string' } });
    const before = await store.getLatestResources();
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const body = `{"${name}":{"resource_type":"prompt_template","template":"x","engine":"f-string"},"other":{"resource_type":"prompt_template","template":"y","engine":"f-string"}}`;
      const res = await raw(server, 'POST', '/v1/agl/resources', { headers: JSON_TYPE, body });
      expect(res.status).toBe(422);
      expect(res.json?.detail).toContain(`"${name}"`);
      await expect(store.addResources(JSON.parse(body) as never)).rejects.toSatisfy(
        (e) => ValidationError.isInstance(e) && String((e as Error).message).includes(name),
      );
    }
    expect(await store.getLatestResources()).toEqual(before);
  });

  it('answers odd ids in the path (.., ., slashes, control characters) with a 400 naming the parameter', async () => {
    const { server, store } = await start();
    for (const [method, path] of [
      ['GET', '/v1/agl/rollouts/..'],
      ['GET', '/v1/agl/rollouts/.'],
      ['POST', '/v1/agl/resources/..'],
      ['POST', '/v1/agl/workers/%2e%2e'],
      ['GET', '/v1/agl/rollouts/a%2Fb/attempts'],
      ['GET', '/v1/agl/workers/a%00b'],
    ] as const) {
      const res = await raw(server, method, path, { headers: JSON_TYPE, body: method === 'POST' ? '{}' : undefined });
      expect(res.status, path).toBe(400);
      expect(res.json?.detail, path).toMatch(/_id: .* is not a valid id/);
    }
    expect((await store.queryResources()).total).toBe(0);
    expect((await store.queryWorkers()).total).toBe(0);
  });
});
