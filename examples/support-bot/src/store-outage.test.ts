import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStoreServe, waitFor } from './child-service';
import { markedChats, markersIn, readStore, sendChats, serviceStats } from './live-traffic';
import { startSupportStack, type SupportStack } from './support-stack';

const OUTAGE_MS = 5000;

describe('support-bot while its store is down', () => {
  let stack: SupportStack;
  // Slow enough that all 100 requests are still in flight when the store dies.
  beforeAll(async () => {
    stack = await startSupportStack({ llmLatencyMs: 400 });
  });
  afterAll(() => stack?.close());

  it('answers every request while the store is SIGKILLed, then delivers every rollout once it is back', async () => {
    const run = `down${Date.now().toString(36)}`;
    const chats = markedChats(run, 100);
    const sent = sendChats(stack.bot.url, chats);
    await waitFor('all 100 requests at the LLM', async () => (stack.llm.requests.length >= 100 ? true : undefined));
    await stack.store.stop('SIGKILL');
    const killedAt = Date.now();

    const answers = await sent;
    answers.forEach((a, i) =>
      expect(a, chats[i]!.marker).toMatchObject({ status: 200, reply: chats[i]!.expectedReply }),
    );
    expect((await serviceStats(stack.bot.url)).buffered).toBeGreaterThan(0);

    // The outage lasts 5 s from the kill (a scenario length, not a wait for a condition).
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + OUTAGE_MS - Date.now())));
    const port = Number(new URL(stack.store.url).port);
    stack.store = await startStoreServe({ db: stack.db, port });

    await waitFor('the recorder to drain its buffer', async () => {
      const s = await serviceStats(stack.bot.url);
      return s.buffered === 0 ? s : undefined;
    });
    const stored = await readStore(stack.store.url);
    const byId = new Map(stored.map((r) => [r.rollout.rolloutId, r]));
    let missing = 0;
    answers.forEach((a, i) => {
      const r = byId.get(a.rolloutId!);
      const complete =
        r !== undefined &&
        r.rollout.status === 'succeeded' &&
        r.transitions.length === 2 &&
        [...markersIn(r.spans, run)].join() === chats[i]!.marker;
      if (!complete) missing += 1;
    });
    const stats = await serviceStats(stack.bot.url);
    expect(stored).toHaveLength(100);
    expect(stats.dropped).toBe(missing);
    expect(missing).toBe(0); // the default buffer holds a 5 s outage of 100 requests
  });
});
