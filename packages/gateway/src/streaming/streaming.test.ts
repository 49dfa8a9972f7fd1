import { MemoryStore } from '@agl/store';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { spansOf } from '../__fixtures__/gateway-fixture';
import { chatChunk, deferred, startScriptedBackend } from '../__fixtures__/scripted-backend';
import { type Gateway, startGateway } from '../index';

describe('gateway streaming', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup(
    handler: Parameters<typeof startScriptedBackend>[0],
  ): Promise<{ store: MemoryStore; gateway: Gateway; client: OpenAI; rolloutId: string }> {
    const backend = await startScriptedBackend(handler);
    const store = new MemoryStore();
    const gateway = await startGateway({ store, backend: backend.baseURL, port: 0 });
    cleanups.push(
      () => backend.close(),
      () => gateway.close(),
      () => store.close(),
    );
    const r = await store.startRollout({ input: null, mode: 'train' });
    const client = new OpenAI({
      baseURL: `${gateway.url}/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/v1`,
      apiKey: 'x',
      maxRetries: 0,
    });
    return { store, gateway, client, rolloutId: r.rolloutId };
  }

  it('delivers the first chunk to the client while the backend is still generating, and stores the span only at the end', async () => {
    const release = deferred();
    let backendFinished = false;
    const { store, client, rolloutId } = await setup(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chatChunk('Hel', { token_ids: [11] }));
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', prompt_token_ids: [1, 2, 3], choices: [] })}\n\n`,
      );
      await release.promise;
      res.write(chatChunk('lo', { token_ids: [12] }));
      res.write(chatChunk(null, { token_ids: [] }, 'stop'));
      res.end('data: [DONE]\n\n');
      backendFinished = true;
    });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect(first.value.choices[0]?.delta.content).toBe('Hel');
    expect(backendFinished).toBe(false);
    expect(await spansOf(store, rolloutId)).toEqual([]);

    release.resolve();
    let rest = '';
    for (let next = await iterator.next(); !next.done; next = await iterator.next())
      rest += next.value.choices[0]?.delta.content ?? '';
    expect(rest).toBe('lo');
    expect(backendFinished).toBe(true);
    const spans = await spansOf(store, rolloutId);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes).toMatchObject({
      'gen_ai.completion.0.content': 'Hello',
      prompt_token_ids: [1, 2, 3],
      response_token_ids: [11, 12],
    });
  });

  it('cuts the client stream and stores nothing when the backend stream breaks off', async () => {
    const { store, client, rolloutId } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chatChunk('partial', { token_ids: [5] }));
      setImmediate(() => res.destroy());
    });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const read = async (): Promise<string> => {
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    };
    await expect(read()).rejects.toThrow();
    expect(await spansOf(store, rolloutId)).toEqual([]);
  });

  it('stores nothing when the backend stream ends without its final event', async () => {
    const { store, client, rolloutId } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(chatChunk('partial', { token_ids: [5] }));
    });
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const read = async (): Promise<void> => {
      for await (const _chunk of stream) void _chunk;
    };
    await expect(read()).rejects.toThrow();
    expect(await spansOf(store, rolloutId)).toEqual([]);
  });
});
