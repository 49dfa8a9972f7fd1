import { request } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayFixture, startGatewayFixture } from '../__fixtures__/gateway-fixture';
import { isJsonContentType, parseCorsOrigins } from './browser-guard';

const PAGE = 'http://localhost:5173';
const EVIL = 'https://evil.example';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends exactly the given request line, headers and body (as a browser would put them on the wire). */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

const CHAT = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'spend the key' }] });

describe('gateway: browsers cannot drive it (token-less, the default)', () => {
  let fx: GatewayFixture;
  beforeAll(async () => {
    fx = await startGatewayFixture({ gateway: { corsOrigins: [PAGE] } });
  });
  afterAll(() => fx.close());

  it("refuses a page's simple text/plain POST to chat completions with 415 and never reaches the backend", async () => {
    const before = fx.llm.requests.length;
    // What `fetch(url, { method: 'POST', body: '{...}' })` sends from a page: no preflight, text/plain.
    const res = await raw(
      `${fx.gateway.url}/v1/chat/completions`,
      'POST',
      { 'content-type': 'text/plain;charset=UTF-8', origin: PAGE },
      CHAT,
    );
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toMatchObject({
      error_type: 'unsupported_media_type',
      detail: expect.stringContaining('Content-Type: application/json'),
    });
    // Without any Origin (a script, curl): the same body type is refused too.
    const scripted = await raw(
      `${fx.gateway.url}/v1/chat/completions`,
      'POST',
      { 'content-type': 'application/x-www-form-urlencoded' },
      CHAT,
    );
    expect(scripted.status).toBe(415);
    expect(fx.llm.requests.length).toBe(before);
  });

  it('refuses a text/plain POST /proxy/pause (415), and a page of another origin even without a body (403)', async () => {
    const plain = await raw(
      `${fx.gateway.url}/proxy/pause`,
      'POST',
      { 'content-type': 'text/plain;charset=UTF-8' },
      '{"retry_after_seconds":3600}',
    );
    expect(plain.status).toBe(415);
    // A `no-cors` POST without a body from another page: no Content-Type at all, but an Origin.
    const bodiless = await raw(`${fx.gateway.url}/proxy/pause`, 'POST', { origin: EVIL, 'content-length': '0' });
    expect(bodiless.status).toBe(403);
    expect(JSON.parse(bodiless.body)).toMatchObject({ error_type: 'origin_not_allowed' });
    expect(bodiless.headers['access-control-allow-origin']).toBeUndefined();
    expect(fx.gateway.state().paused).toBe(false);
    // Later calls are still served.
    const client = new OpenAI({ baseURL: `${fx.gateway.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]!.message.content).toBeTruthy();
  });

  it('answers no CORS preflight from an origin --cors-origin does not name', async () => {
    const res = await raw(`${fx.gateway.url}/v1/chat/completions`, 'OPTIONS', {
      origin: EVIL,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,authorization',
    });
    expect(res.status).toBe(403);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('answers the preflight of the named origin for that origin only, and its JSON calls carry the CORS header', async () => {
    const pre = await raw(`${fx.gateway.url}/v1/chat/completions`, 'OPTIONS', {
      origin: PAGE,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,authorization,x-stainless-os',
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(PAGE);
    expect(pre.headers['access-control-allow-methods']).toBe('GET, POST');
    expect(pre.headers['access-control-allow-headers']).toBe('content-type, authorization, x-stainless-os');
    expect(pre.headers.vary).toBe('Origin');
    const call = await raw(
      `${fx.gateway.url}/v1/chat/completions`,
      'POST',
      { 'content-type': 'application/json', origin: PAGE },
      CHAT,
    );
    expect(call.status).toBe(200);
    expect(call.headers['access-control-allow-origin']).toBe(PAGE);
    // A header no SDK sends is not granted.
    const odd = await raw(`${fx.gateway.url}/v1/chat/completions`, 'OPTIONS', {
      origin: PAGE,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'x-agl-reveal-secrets',
    });
    expect(odd.status).toBe(403);
  });
});

describe('gateway without --cors-origin', () => {
  let fx: GatewayFixture;
  beforeAll(async () => {
    fx = await startGatewayFixture();
  });
  afterAll(() => fx.close());

  it('answers no preflight at all and refuses every page origin', async () => {
    const pre = await raw(`${fx.gateway.url}/v1/chat/completions`, 'OPTIONS', {
      origin: PAGE,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    });
    expect(pre.status).toBe(403);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('still serves the OpenAI SDK and a JSON pause/resume without Origin', async () => {
    const client = new OpenAI({ baseURL: `${fx.gateway.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    const paused = await raw(
      `${fx.gateway.url}/proxy/pause`,
      'POST',
      { 'content-type': 'application/json; charset=utf-8' },
      '{"reason":"weights"}',
    );
    expect(paused.status).toBe(200);
    expect((await raw(`${fx.gateway.url}/proxy/resume`, 'POST', { 'content-length': '0' })).status).toBe(200);
  });
});

describe('browser-guard helpers', () => {
  it('knows JSON media types', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON; charset=utf-8')).toBe(true);
    expect(isJsonContentType('application/vnd.api+json')).toBe(true);
    for (const t of [
      'text/plain',
      'text/plain;charset=UTF-8',
      'multipart/form-data',
      'application/x-www-form-urlencoded',
    ])
      expect(isJsonContentType(t)).toBe(false);
    expect(isJsonContentType(undefined)).toBe(false);
  });

  it('refuses "*", "null" and paths in --cors-origin, naming the value', () => {
    expect(() => parseCorsOrigins(['*'])).toThrow(/"\*"/);
    expect(() => parseCorsOrigins(['null'])).toThrow(/null/);
    expect(() => parseCorsOrigins(['http://x.test/app'])).toThrow(/without a path/);
    expect([...parseCorsOrigins(['HTTP://LocalHost:5173/'])]).toEqual(['http://localhost:5173']);
  });
});
