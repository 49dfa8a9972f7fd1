import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { describe, expect, it, vi } from 'vitest';
import { stream } from 'hono/streaming';
import { observeFetch } from '../index';
import { createChatApp } from './__fixtures__/hono-chat-app';
import { fakeLlmCall, storedRollout, useObservedStore } from './__fixtures__/framework-helpers';

describe('observeFetch on Hono, served by @hono/node-server (real HTTP on 127.0.0.1)', () => {
  const ctx = useObservedStore();
  const start = (fetch: (request: Request) => Response | Promise<Response>): Promise<string> =>
    new Promise((resolve) => {
      ctx.track(
        serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(`http://127.0.0.1:${info.port}`)) as Server,
      );
    });

  it('observeFetch(app.fetch): concurrent requests, each rollout with its JSON body and its own spans only', async () => {
    const base = await start(observeFetch(createChatApp(fakeLlmCall).fetch));
    const questions = Array.from({ length: 30 }, (_, i) => `hono-marker-${i}`);
    const answers = await Promise.all(
      questions.map(async (question) => {
        const response = await fetch(`${base}/chat?lang=en`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question }),
        });
        return { question, response, body: await response.json() };
      }),
    );
    const ids = new Set<string>();
    for (const { question, response, body } of answers) {
      expect(response.status).toBe(201);
      expect(body).toEqual({ answer: `answer to ${question}`, recorded: true });
      const id = response.headers.get('x-agl-rollout-id')!;
      ids.add(id);
      expect(await storedRollout(ctx.store, id)).toEqual({
        status: 'succeeded',
        input: { method: 'POST', path: '/chat', body: { question } },
        prompts: [question],
        exceptions: [],
      });
    }
    expect(ids.size).toBe(questions.length);
  });

  it('status codes, headers and bodies are as the app answers them; a thrown error (Hono answers 500) fails the rollout', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined); // Hono logs the errors it answers
    const app = createChatApp(fakeLlmCall);
    const [withAgl, withoutAgl] = [await start(observeFetch(app.fetch)), await start(app.fetch)];
    const seen = async (response: Response) => ({
      status: response.status,
      type: response.headers.get('content-type'),
      body: await response.text(),
    });
    for (const path of ['/teapot', '/throws', '/nowhere']) {
      const [a, b] = await Promise.all([fetch(withAgl + path), fetch(withoutAgl + path)]);
      expect(b.headers.get('x-agl-rollout-id')).toBeNull();
      const id = a.headers.get('x-agl-rollout-id') ?? 'missing header';
      expect(await seen(a)).toEqual(await seen(b));
      const rollout = await storedRollout(ctx.store, id);
      if (path === '/throws') expect(rollout).toMatchObject({ status: 'failed', exceptions: [/status was 500/] });
      else expect(rollout).toMatchObject({ status: 'succeeded', exceptions: [] });
    }
  });

  it('a streamed answer (Hono stream()) arrives unchanged; the rollout holds its spans and ends after the stream', async () => {
    const app = createChatApp(async (question) => {
      await new Promise((resolve) => setTimeout(resolve, 50)); // the answer comes well after the handler returned
      return fakeLlmCall(question);
    });
    const base = await start(observeFetch(app.fetch));
    const response = await fetch(`${base}/stream/stream-marker`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('thinking... answer to stream-marker');
    const id = response.headers.get('x-agl-rollout-id')!;
    expect(await storedRollout(ctx.store, id)).toMatchObject({ status: 'succeeded', prompts: ['stream-marker'] });
    const [span] = (await ctx.store.querySpans({ rolloutId: id })).items;
    const attempt = await ctx.store.getLatestAttempt(id);
    expect(attempt!.endTime!).toBeGreaterThanOrEqual(span!.endTime!);
  });

  it('a ReadableStream body is passed through chunk by chunk; a stream that errors fails the rollout with its error', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined); // @hono/node-server logs the stream's error
    const app = createChatApp(fakeLlmCall);
    const body = (fail: boolean): ReadableStream<Uint8Array> => {
      const chunks = ['one ', 'two ', 'three'];
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks.shift();
          if (chunk !== undefined) controller.enqueue(new TextEncoder().encode(chunk));
          else if (fail) controller.error(new Error('stream-broke'));
          else controller.close();
        },
      });
    };
    app.get('/readable', () => new Response(body(false), { headers: { 'content-type': 'text/plain' } }));
    app.get('/broken', () => new Response(body(true)));
    const base = await start(observeFetch(app.fetch));
    const ok = await fetch(`${base}/readable`);
    expect(ok.headers.get('content-type')).toBe('text/plain');
    expect(await ok.text()).toBe('one two three');
    expect((await storedRollout(ctx.store, ok.headers.get('x-agl-rollout-id')!)).status).toBe('succeeded');
    const broken = await fetch(`${base}/broken`);
    await expect(broken.text()).rejects.toThrow();
    expect(await storedRollout(ctx.store, broken.headers.get('x-agl-rollout-id')!)).toMatchObject({
      status: 'failed',
      exceptions: ['stream-broke'],
    });
  });

  it('a client that aborts a streamed answer ends the rollout failed', async () => {
    const app = createChatApp(fakeLlmCall);
    app.get('/endless', (c) =>
      stream(c, async (out) => {
        while (!out.aborted) await out.write('tick ');
      }),
    );
    const base = await start(observeFetch(app.fetch));
    const abort = new AbortController();
    const response = await fetch(`${base}/endless`, { signal: abort.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('tick');
    abort.abort();
    expect(await storedRollout(ctx.store, response.headers.get('x-agl-rollout-id')!)).toMatchObject({
      status: 'failed',
    });
  });
});
