import { createServer } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { describe, expect, it, vi } from 'vitest';
import { observeHandler } from '../index';
import { createChatApp } from './__fixtures__/express-chat-app';
import { fakeLlmCall, listen, storedRollout, useObservedStore } from './__fixtures__/framework-helpers';

describe('observeHandler on Express 5 (real HTTP on 127.0.0.1)', () => {
  const ctx = useObservedStore();
  const serve = (handler: Parameters<typeof createServer>[1]): Promise<string> =>
    listen(ctx.track(createServer(handler)));

  it('a route after express.json(): concurrent requests, each rollout with the parsed body and its own spans only', async () => {
    const base = await serve(createChatApp(fakeLlmCall));
    const markers = Array.from({ length: 30 }, (_, i) => `express-marker-${i}`);
    const answers = await Promise.all(
      markers.map(async (question, i) => {
        const response = await fetch(`${base}/chat/topic-${i}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question }),
        });
        return { question, i, response, body: await response.json() };
      }),
    );
    const ids = new Set<string>();
    for (const { question, i, response, body } of answers) {
      // res.status, res.json and req.params work through the wrapper
      expect(response.status).toBe(201);
      expect(body).toEqual({ topic: `topic-${i}`, answer: `answer to ${question}` });
      const id = response.headers.get('x-agl-rollout-id');
      expect(id).toMatch(/^ro-/);
      ids.add(id!);
      expect(await storedRollout(ctx.store, id!)).toEqual({
        status: 'succeeded',
        input: { method: 'POST', path: `/chat/topic-${i}`, body: { question } },
        prompts: [question],
        exceptions: [],
      });
    }
    expect(ids.size).toBe(markers.length);
  });

  it('a whole app wrapped (createServer(observeHandler(app))): every route recorded, the app answers as before', async () => {
    const app = express();
    app.get('/items/:id', async (req, res) => {
      await fakeLlmCall(`item-${req.params.id}`);
      res.status(200).json({ id: req.params.id });
    });
    const base = await serve(observeHandler(app));
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${base}/items/${i}?q=1`).then(async (r) => ({ i, r, body: await r.json() })),
      ),
    );
    for (const { i, r, body } of responses) {
      expect(body).toEqual({ id: String(i) });
      expect(await storedRollout(ctx.store, r.headers.get('x-agl-rollout-id')!)).toEqual({
        status: 'succeeded',
        input: { method: 'GET', path: `/items/${i}` },
        prompts: [`item-${i}`],
        exceptions: [],
      });
    }
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect((await storedRollout(ctx.store, missing.headers.get('x-agl-rollout-id')!)).status).toBe('succeeded');
  });

  it('a thrown error and next(error) end the rollout failed with that error; Express answers exactly as without AGL', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined); // Express logs the errors it answers
    const recorded = createChatApp(fakeLlmCall);
    // The same routes without AGL, to compare Express's answers with.
    const plain = express();
    plain.get('/throws', async () => {
      throw new Error('boom-thrown');
    });
    plain.get('/next-error', (_req: Request, _res: Response, next: NextFunction) =>
      next(Object.assign(new Error('boom-next'), { status: 422 })),
    );
    for (const app of [recorded, plain]) app.set('env', 'production'); // no stack trace in the error page
    const [withAgl, withoutAgl] = [await serve(recorded), await serve(plain)];
    for (const [path, message] of [
      ['/throws', 'boom-thrown'],
      ['/next-error', 'boom-next'],
    ]) {
      const [a, b] = await Promise.all([fetch(withAgl + path), fetch(withoutAgl + path)]);
      expect({ status: a.status, type: a.headers.get('content-type'), body: await a.text() }).toEqual({
        status: b.status,
        type: b.headers.get('content-type'),
        body: await b.text(),
      });
      const rollout = await storedRollout(ctx.store, a.headers.get('x-agl-rollout-id') ?? 'missing header');
      expect(rollout).toMatchObject({ status: 'failed', exceptions: [message] });
    }
  });
});
