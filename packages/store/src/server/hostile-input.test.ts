import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer } from './index';
import { MAX_JSON_DEPTH, jsonDepth, jsonStructure } from '@agl/core/schema';

/** Regressions found by the fuzzing in tools/reliability: each answer is a 4xx with a JSON detail, never a 500. */
describe('hostile input', () => {
  const TOKEN = 'tok';
  const store = new MemoryStore();
  let dir: string;
  let server: StoreServer;
  const call = async (method: string, path: string, body?: string, auth = true) => {
    const headers: Record<string, string> = auth ? { authorization: `Bearer ${TOKEN}` } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${server.url}${path}`, { method, headers, body });
    const text = await response.text();
    return { status: response.status, json: JSON.parse(text) as { detail?: string; items?: unknown } };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-hostile-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    server = await createStoreServer({ store, port: 0, token: TOKEN, staticDir: dir });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts JSON depth without parsing, skipping brackets inside strings', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[["}]}')).toBe(3);
    expect(jsonDepth('"\\"[["')).toBe(0);
    // Escaped backslashes right before a quote, brackets and quotes inside keys and values, an unterminated string.
    const tricky = ['a\\', '\\"[', '[{"', '\\\\', '"', '}]', ''];
    const value = {
      [tricky[2]!]: [tricky, { x: [[tricky[0]]], [tricky[1]!]: tricky[3] }],
      y: [tricky[4], [[[tricky[5]]]]],
    };
    expect(jsonDepth(JSON.stringify(value))).toBe(5);
    expect(jsonDepth(JSON.stringify(tricky))).toBe(1);
    expect(jsonDepth('[["abc\\\\"]]')).toBe(2);
    expect(jsonDepth('[["abc\\"]]]]')).toBe(2);
  });

  it('counts JSON values (brackets and commas outside strings) without parsing, stopping at the asked bound', () => {
    expect(jsonStructure('[{},{}]')).toEqual({ depth: 2, values: 4 });
    expect(jsonStructure('{"a":[1,2],"b":"x,{[\\\\"}')).toEqual({ depth: 2, values: 4 });
    expect(jsonStructure('[1,2,3,4,5,6]', 3).values).toBe(3);
  });

  it('refuses a body nested deeper than the limit with a 400 instead of overflowing the stack', async () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const res = await call('POST', '/v1/agl/queues/rollouts/enqueue', `{"rollouts":[{"input":${deep}}]}`);
    expect(res.status).toBe(400);
    expect(res.json.detail).toContain(`limit is ${MAX_JSON_DEPTH}`);
    expect((await store.statistics()).totalRollouts).toBe(0);
  });

  it('answers a malformed percent-encoding in the path with a JSON detail', async () => {
    const res = await call('GET', '/v1/agl/workers/%');
    expect(res.status).toBe(400);
    expect(res.json.detail).toMatch(/percent-encode/);
  });

  it('does not let a percent-encoded API path pass as a public dashboard file', async () => {
    const res = await call('GET', '/%76%31/agl/rollouts', undefined, false);
    expect(res.status).toBe(401);
    expect(res.json.items).toBeUndefined();
  });
});
