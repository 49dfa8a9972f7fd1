import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupportBot } from './server';

// In-process, no store configured: the routes' answers to good and bad input (the recording is in the *.test.ts files
// that run real processes).
describe('support-bot routes', () => {
  const server = createSupportBot({ answer: async (message) => `echo ${message}` });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const post = async (path: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  it('answers a chat with the reply and the rollout id of the x-agl-rollout-id header', async () => {
    const res = await fetch(`${url}/chat`, { method: 'POST', body: JSON.stringify({ message: 'hi' }) });
    const body = (await res.json()) as { reply: string; rolloutId: string };
    expect(res.status).toBe(200);
    expect(body.reply).toBe('echo hi');
    expect(body.rolloutId).toBe(res.headers.get('x-agl-rollout-id'));
  });

  it('answers 400 naming the field for bad chats and bad feedback, 404 for an unknown route', async () => {
    expect(await post('/chat', '{"text": "hi"}')).toMatchObject({ status: 400, json: { error: /"message"/u } });
    expect(await post('/chat', 'not json')).toMatchObject({ status: 400, json: { error: /not JSON/u } });
    expect(await post('/feedback', '{"reward": 1}')).toMatchObject({ status: 400, json: { error: /"rolloutId"/u } });
    expect(await post('/feedback', '{"rolloutId": "ro-1", "reward": "good"}')).toMatchObject({
      status: 400,
      json: { error: /"reward"/u },
    });
    expect((await fetch(`${url}/nope`)).status).toBe(404);
  });
});
