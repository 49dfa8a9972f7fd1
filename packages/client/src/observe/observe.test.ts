import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  configureObserve,
  feedback,
  flushObserve,
  observe,
  observeFetch,
  observeHandler,
  observeStats,
  shutdownObserve,
} from '../index';

/** An LLM-call span (what an adapter writes), with `marker` in its prompt. */
async function fakeLlmCall(marker: string, fail = false): Promise<string> {
  await new Promise((resolve) => setImmediate(resolve));
  return getAglTracer()
    .getTracer('test')
    .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttribute('gen_ai.prompt.0.role', 'user');
      span.setAttribute('gen_ai.prompt.0.content', marker);
      span.setAttribute('gen_ai.completion.0.content', `answer to ${marker}`);
      span.end();
      if (fail) throw new Error(`LLM failed for ${marker}`);
      return `answer to ${marker}`;
    });
}

/** A request/response pair with no socket, for a handler that never answers. */
function fakeExchange(): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.method = 'GET';
  req.url = '/';
  return { req, res: new ServerResponse(req) };
}

const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message) };

describe('observe against a real store server (SQLite file)', () => {
  let dir: string;
  let store: SqliteStore;
  let server: StoreServer;
  const apps: Server[] = [];

  beforeEach(async () => {
    warnings.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'agl-observe-'));
    store = new SqliteStore({ path: join(dir, 'store.sqlite') });
    server = await createStoreServer({ store, port: 0, token: 'secret' });
  });
  afterEach(async () => {
    await shutdownObserve(1_000);
    for (const app of apps.splice(0)) await new Promise((resolve) => app.close(resolve));
    await server.close();
    store.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a rollout with its spans, returns the value, and ends it succeeded (or failed, rethrowing the same error)', async () => {
    configureObserve({ store: server.url, token: 'secret', logger, agentName: 'bot' });
    let seen = '';
    const value = await observe({ input: { q: 'hi' }, metadata: { user: 'u1' } }, async (rollout) => {
      seen = rollout.rolloutId;
      return fakeLlmCall('marker-ok');
    });
    expect(value).toBe('answer to marker-ok');
    const boom = new Error('boom');
    let failedId = '';
    await expect(
      observe({ input: 'x' }, async (rollout) => {
        failedId = rollout.rolloutId;
        await fakeLlmCall('marker-fail');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await flushObserve()).toBe(true);
    const rollout = await store.getRolloutById(seen);
    expect(rollout).toMatchObject({
      input: { q: 'hi' },
      mode: null,
      status: 'succeeded',
      metadata: { source: 'production', user: 'u1', agent_name: 'bot' },
    });
    const spans = (await store.querySpans({ rolloutId: seen })).items;
    expect(spans.map((s) => s.attributes['gen_ai.prompt.0.content'])).toEqual(['marker-ok']);
    expect((await store.getRolloutById(failedId))?.status).toBe('failed');
    const failedSpans = (await store.querySpans({ rolloutId: failedId })).items;
    expect(failedSpans.map((s) => s.name)).toEqual([SPAN_CHAT_COMPLETION, 'agentlightning.exception']);
    expect(observeStats()).toMatchObject({ recorded: 2, dropped: 0, buffered: 0, rejected: 0 });
    // late feedback becomes a reward span on the finished rollout
    const span = await feedback(seen, 0.5, { comment: 'good' });
    expect(span.attributes['agl.feedback.comment']).toBe('good');
    await expect(feedback('ro-missing', 1)).rejects.toThrow(/ro-missing/);
  });

  it('observeHandler: concurrent requests each get their own rollout and spans, the header and the default input', async () => {
    configureObserve({ store: server.url, token: 'secret', logger });
    const app = createServer(
      observeHandler(async (req, res) => {
        const marker = decodeURIComponent((req.url ?? '').split('m=')[1] ?? '');
        const answer = await fakeLlmCall(marker);
        if (marker.endsWith('-500')) {
          res.statusCode = 500;
          res.end('bad');
          return;
        }
        res.end(answer);
      }),
    );
    apps.push(app);
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    const markers = Array.from({ length: 40 }, (_, i) => `req-${i}${i === 7 ? '-500' : ''}`);
    const answers = await Promise.all(
      markers.map(async (m) => {
        const response = await fetch(`${base}/ask?m=${m}`);
        return {
          m,
          status: response.status,
          id: response.headers.get('x-agl-rollout-id'),
          body: await response.text(),
        };
      }),
    );
    expect(await flushObserve()).toBe(true);
    for (const a of answers) {
      expect(a.id).toMatch(/^ro-/);
      const rollout = await store.getRolloutById(a.id!);
      expect(rollout?.input).toEqual({ method: 'GET', path: '/ask' });
      expect(rollout?.status).toBe(a.m.endsWith('-500') ? 'failed' : 'succeeded');
      const spans = (await store.querySpans({ rolloutId: a.id! })).items.filter((s) => s.name === SPAN_CHAT_COMPLETION);
      expect(spans.map((s) => s.attributes['gen_ai.prompt.0.content'])).toEqual([a.m]);
    }
    expect(answers.filter((a) => a.status === 200)).toHaveLength(39);
  });

  it('observeHandler: a response the client aborted ends the rollout failed; the handler error is rethrown as is', async () => {
    configureObserve({ store: server.url, token: 'secret', logger });
    let started!: (id: string) => void;
    const startedId = new Promise<string>((resolve) => (started = resolve));
    const wrapped = observeHandler(async (_req, res) => {
      started(String(res.getHeader('x-agl-rollout-id')));
      await new Promise((resolve) => res.on('close', resolve));
    });
    const app = createServer(wrapped);
    apps.push(app);
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    const abort = new AbortController();
    const request = fetch(`http://127.0.0.1:${(app.address() as AddressInfo).port}/slow`, { signal: abort.signal });
    const id = await startedId;
    abort.abort();
    await expect(request).rejects.toThrow();
    const deadline = Date.now() + 10_000;
    while ((await store.getRolloutById(id))?.status !== 'failed' && Date.now() < deadline) await flushObserve(500);
    expect((await store.getRolloutById(id))?.status).toBe('failed');
    const boom = new Error('handler bug');
    const throwing = observeHandler(() => {
      throw boom;
    });
    const { req, res } = fakeExchange();
    await expect(throwing(req, res)).rejects.toBe(boom);
  });

  it('observeFetch: adds the header (also to an immutable Response), stores the JSON body, leaves it readable', async () => {
    configureObserve({ store: server.url, token: 'secret', logger });
    const handler = observeFetch(async (request: Request) => {
      const body = (await request.json()) as { q: string };
      await fakeLlmCall(body.q);
      return Response.json({ ok: body.q });
    });
    const immutable = observeFetch(async () => Response.redirect('http://127.0.0.1/elsewhere', 302));
    const response = await handler(
      new Request('http://app/chat?x=1', { method: 'POST', body: '{"q":"fetch-marker"}' }),
    );
    expect(await response.json()).toEqual({ ok: 'fetch-marker' });
    const id = response.headers.get('x-agl-rollout-id')!;
    const redirect = await immutable(new Request('http://app/r'));
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('x-agl-rollout-id')).toMatch(/^ro-/);
    await flushObserve();
    expect((await store.getRolloutById(id))?.input).toEqual({
      method: 'POST',
      path: '/chat',
      body: { q: 'fetch-marker' },
    });
  });
});
