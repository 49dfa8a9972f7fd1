import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../memory/memory-store';
import { createStoreServer, type StoreServer } from '../index';

let dir: string;
let server: StoreServer;
const store = new MemoryStore();

/** A raw GET that does not normalise `..` (fetch would). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-static-'));
  await mkdir(join(dir, 'app', 'assets'), { recursive: true });
  await writeFile(join(dir, 'app', 'index.html'), '<!doctype html><title>AGL</title><div id="root"></div>');
  await writeFile(join(dir, 'app', 'assets', 'main-abc123.js'), 'console.log("app")');
  await writeFile(join(dir, 'secret.txt'), 'do not serve');
  server = await createStoreServer({ store, port: 0, token: 'tok', staticDir: join(dir, 'app') });
});
afterAll(async () => {
  await server.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('static dashboard serving (staticDir)', () => {
  it('serves index.html at / without a token, and revalidates it', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.text()).toContain('<div id="root">');
  });

  it('serves hashed assets with their type and a long cache', async () => {
    const res = await fetch(`${server.url}/assets/main-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/javascript');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(await res.text()).toBe('console.log("app")');
  });

  it('falls back to index.html for client-side routes, but 404s a missing file', async () => {
    const route = await fetch(`${server.url}/rollouts/ro-123?tab=attempts`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<title>AGL</title>');
    const missing = await fetch(`${server.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error_type: string }).error_type).toBe('AGL_RouteNotFoundError');
  });

  it('refuses path traversal, plain or encoded', async () => {
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt']) {
      const res = await rawGet(server.url, path);
      expect(res.body, path).not.toContain('do not serve');
      expect([400, 404]).toContain(res.status);
    }
  });

  it('keeps the API token-protected and API 404s as JSON', async () => {
    expect((await fetch(`${server.url}/v1/agl/rollouts`)).status).toBe(401);
    const ok = await fetch(`${server.url}/v1/agl/rollouts`, { headers: { authorization: 'Bearer tok' } });
    expect(ok.status).toBe(200);
    const unknown = await fetch(`${server.url}/v1/agl/not-a-route`, { headers: { authorization: 'Bearer tok' } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error_type: string }).error_type).toBe('AGL_RouteNotFoundError');
    expect((await fetch(`${server.url}/v1/agl/not-a-route`)).status).toBe(401);
  });

  it('does not let an encoded API path through without the token', async () => {
    await store.enqueueRollout({ input: 'private' });
    for (const path of ['/%76%31/agl/rollouts', '/v%31/agl/rollouts', '/%2Fv1/agl/rollouts']) {
      const res = await rawGet(server.url, path);
      expect(res.body, path).not.toContain('private');
      expect(res.status, path).not.toBe(200);
    }
  });

  it('serves no static files when staticDir is not set', async () => {
    const plain = await createStoreServer({ store: new MemoryStore(), port: 0 });
    try {
      const res = await fetch(`${plain.url}/`);
      expect(res.status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
