import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './child-service';
import { markedChats, markersIn, readStore, sendChats, serviceStats } from './live-traffic';
import { startSupportStack, type SupportStack } from './support-stack';

describe('support-bot with AGL_SAMPLE_RATE=0.25', () => {
  let stack: SupportStack;
  beforeAll(async () => {
    stack = await startSupportStack({ botEnv: { AGL_SAMPLE_RATE: '0.25' } });
  });
  afterAll(() => stack?.close());

  it('records about a quarter of 400 requests; the others leave nothing in the store', async () => {
    const run = `sample${Date.now().toString(36)}`;
    const chats = markedChats(run, 400);
    const answers = await sendChats(stack.bot.url, chats, 50);
    answers.forEach((a, i) =>
      expect(a, chats[i]!.marker).toMatchObject({ status: 200, reply: chats[i]!.expectedReply }),
    );
    // Every answer carries a rollout id (also unrecorded ones); the store holds only the recorded quarter.
    const markerOf = new Map(answers.map((a, i) => [a.rolloutId!, chats[i]!.marker]));
    const stats = await waitFor('the recorder to export everything', async () => {
      const s = await serviceStats(stack.bot.url);
      return s.buffered === 0 && s.recorded + s.sampledOut === 400 ? s : undefined;
    });
    expect(stats.recorded).toBeGreaterThanOrEqual(70);
    expect(stats.recorded).toBeLessThanOrEqual(130);
    const stored = await waitFor('every recorded rollout finished', async () => {
      const all = await readStore(stack.store.url);
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
