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
    // Every answer carries a rollout id (also unrecorded ones); the store holds only the recorded quarter.
    const markerOf = new Map(answers.map((a, i) => [a.rolloutId!, chats[i]!.marker]));
    const stats = await waitFor('the recorder to export everything', async () => {
      const s = await serviceStats(bot.url);
      return s.buffered === 0 && s.recorded + s.sampledOut === 400 ? s : undefined;
    });
    expect(stats.recorded).toBeGreaterThanOrEqual(70);
    expect(stats.recorded).toBeLessThanOrEqual(130);
    const stored = await waitFor('every recorded rollout finished', async () => {
      const all = await readStore(store.url);
      return all.every((r) => r.rollout.status === 'succeeded') ? all : undefined;
    });
    expect(stored).toHaveLength(stats.recorded);
    const seen = new Set<string>();
    for (const r of stored) {
      expect(r.rollout.metadata).toMatchObject({ source: 'production' });
      expect(r.transitions).toHaveLength(2);
      const markers = [...markersIn(r.spans, run)];
      expect(markers).toEqual([markerOf.get(r.rollout.rolloutId)]);
      seen.add(markers[0]!);
    }
    // No span of an unrecorded request reached the store, as its own rollout, an unscoped one or another's.
    expect(seen.size).toBe(stats.recorded);
    expect(stats.unscoped).toBe(0);
    expect(stats.sampledOut).toBe(400 - stats.recorded);
  });
});
