// The Hono example of the client README, as the tests run it (`answer` stands for the app's agent).
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { observedRollout } from '../../index';

/** The README's Hono app; the README serves it with `serve({ fetch: observeFetch(app.fetch) })`. */
export function createChatApp(answer: (question: string) => Promise<string>): Hono {
  const app = new Hono();
  app.post('/chat', async (c) => {
    const { question } = await c.req.json<{ question: string }>();
    // The rollout of this request (its id, the latest published resources), from the Request observeFetch saw.
    const rollout = observedRollout(c.req.raw);
    return c.json({ answer: await answer(question), recorded: rollout?.recorded ?? false }, 201);
  });
  // A streamed answer: the rollout ends when the stream has been sent, so the spans made while streaming are its own.
  app.get('/stream/:question', (c) =>
    stream(c, async (out) => {
      await out.write('thinking... ');
      await out.write(await answer(c.req.param('question')));
    }),
  );
  app.get('/teapot', (c) => c.text('short and stout', 418));
  app.get('/throws', () => {
    throw new Error('boom-thrown');
  });
  return app;
}
