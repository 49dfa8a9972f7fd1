import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { configureObserve, feedback, flushObserve, observeHandler, observeStats, shutdownObserve } from '@agl/client';
import { findFinalReward, TraceToTransitions } from '@agl/core/transitions';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentOpenAI } from './instrument-openai';

// Issue 37: a node:http service answering through the official openai client, recorded with observeHandler against a
// real store server on a SQLite file. Each request carries a marker that its LLM spans, and no other rollout's, hold.
describe('a live service recorded with observeHandler and @agl/openai', () => {
  let dir: string;
  let store: SqliteStore;
  let storeServer: StoreServer;
  let llm: OpenAiTestServer;
  let app: Server;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-openai-observe-'));
    store = new SqliteStore({ path: join(dir, 'store.sqlite') });
    storeServer = await createStoreServer({ store, port: 0, token: 't0k' });
    llm = await startOpenAiTestServer({ respond: (r) => ({ content: `echo ${r.messages.at(-1)?.content ?? ''}` }) });
    configureObserve({ store: storeServer.url, token: 't0k', agentName: 'svc' });
    const openai = instrumentOpenAI(new OpenAI({ baseURL: llm.baseURL, apiKey: 'sk-test-key', maxRetries: 0 }));
    app = createServer(
      observeHandler(async (req, res) => {
        const marker = new URL(req.url ?? '/', 'http://x').searchParams.get('m') ?? '';
        const first = await openai.chat.completions.create({
          model: 'test-model',
          messages: [{ role: 'user', content: `first ${marker}` }],
        });
        const second = await openai.chat.completions.create({
          model: 'test-model',
          messages: [{ role: 'user', content: `second ${marker}` }],
        });
        res.end(`${first.choices[0]?.message.content}|${second.choices[0]?.message.content}`);
      }),
    );
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await shutdownObserve(1_000);
    await new Promise((resolve) => app.close(resolve));
    await llm.close();
    await storeServer.close();
    store.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('concurrent requests each become one rollout holding exactly their own LLM spans; feedback is the final reward', async () => {
    const markers = Array.from({ length: 30 }, (_, i) => `mk${i}x`);
    const answers = await Promise.all(
      markers.map(async (m) => {
        const response = await fetch(`${base}/ask?m=${m}`);
        return {
          m,
          status: response.status,
          id: response.headers.get('x-agl-rollout-id')!,
          body: await response.text(),
        };
      }),
    );
    expect(await flushObserve(10_000)).toBe(true);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body).toBe(`echo first ${a.m}|echo second ${a.m}`);
      const rollout = await store.getRolloutById(a.id);
      expect(rollout).toMatchObject({
        status: 'succeeded',
        mode: null,
        metadata: { source: 'production', agent_name: 'svc' },
      });
      const spans = (await store.querySpans({ rolloutId: a.id })).items.filter((s) => s.name === SPAN_CHAT_COMPLETION);
      expect(spans.map((s) => s.attributes['gen_ai.prompt.0.content'])).toEqual([`first ${a.m}`, `second ${a.m}`]);
      for (const s of spans) expect(new Set(JSON.stringify(s.attributes).match(/mk\d+x/g))).toEqual(new Set([a.m]));
    }
    expect(observeStats()).toMatchObject({ recorded: 30, dropped: 0, rejected: 0 });
    // late feedback on five of them: the transitions' final reward is the feedback
    for (const a of answers.slice(0, 5)) await feedback(a.id, 0.9, { comment: 'thanks' });
    for (const a of answers.slice(0, 6)) {
      const spans = (await store.querySpans({ rolloutId: a.id })).items;
      expect(findFinalReward(spans)).toBe(answers.indexOf(a) < 5 ? 0.9 : null);
      const transitions = new TraceToTransitions().transitions(spans);
      expect(transitions.at(-1)?.reward ?? null).toBe(answers.indexOf(a) < 5 ? 0.9 : null);
    }
  });
});
