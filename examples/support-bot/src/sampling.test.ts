import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { startStoreServe, startSupportBotProcess, waitFor, type ChildService } from './child-service';
import { markedChats, markersIn, readStore, sendChats, serviceStats } from './live-traffic';
import { supportRuleLlm } from './support-rule-llm';

describe('support-bot with AGL_SAMPLE_RATE=0.25', () => {
  let dir: string;
  let llm: OpenAiTestServer;
  let store: ChildService;
  let bot: ChildService;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-support-bot-sample-'));
    llm = await startOpenAiTestServer({ respond: supportRuleLlm });
    store = await startStoreServe({ db: join(dir, 'store.sqlite') });
    bot = await startSupportBotProcess({
      OPENAI_BASE_URL: llm.baseURL,
      AGL_STORE_URL: store.url,
      AGL_SAMPLE_RATE: '0.25',
    });
  });
  afterAll(async () => {
    await bot?.stop();
    await store?.stop();
    await llm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records about a quarter of 400 requests; the others leave nothing in the store', async () => {
    const run = `sample${Date.now().toString(36)}`;
    const chats = markedChats(run, 400);
    const answers = await sendChats(bot.url, chats, 50);
    answers.forEach((a, i) =>
      expect(a, chats[i]!.marker).toMatchObject({ status: 200, reply: chats[i]!.expectedReply }),
    );
    const recorded = answers.flatMap((a, i) =>
      a.rolloutId ? [{ rolloutId: a.rolloutId, marker: chats[i]!.marker }] : [],
    );
    expect(recorded.length).toBeGreaterThanOrEqual(70);
    expect(recorded.length).toBeLessThanOrEqual(130);

    await waitFor('the recorder to export everything', async () => {
      const s = await serviceStats(bot.url);
      return s.buffered === 0 && s.recorded === recorded.length ? s : undefined;
    });
    const stored = await waitFor('every recorded rollout finished', async () => {
      const all = await readStore(store.url);
      return all.every((r) => r.rollout.status === 'succeeded') ? all : undefined;
    });
    expect(stored.map((r) => r.rollout.rolloutId).sort()).toEqual(recorded.map((r) => r.rolloutId).sort());
    const markerOf = new Map(recorded.map((r) => [r.rolloutId, r.marker]));
    for (const r of stored) {
      expect(r.rollout.metadata).toMatchObject({ source: 'production' });
      expect([...markersIn(r.spans, run)]).toEqual([markerOf.get(r.rollout.rolloutId)]);
    }
    expect((await serviceStats(bot.url)).sampledOut).toBe(400 - recorded.length);
  });
});
