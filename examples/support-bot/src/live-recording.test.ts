import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_DIR, SOURCE_FLAGS, waitFor } from './child-service';
import { markedChats, markersIn, readStore, sendChats, serviceStats } from './live-traffic';
import { startSupportStack, type SupportStack } from './support-stack';

// Real processes: the service (`npm start`'s command line) and `agl store serve` in children, the test LLM here, and
// the feedback from a third process.
describe('support-bot recorded live', () => {
  let stack: SupportStack;
  beforeAll(async () => {
    stack = await startSupportStack();
  });
  afterAll(() => stack?.close());

  it('200 concurrent requests are 200 rollouts with their own LLM spans; 50 late feedbacks become their rewards', async () => {
    const run = `live${Date.now().toString(36)}`;
    const chats = markedChats(run, 200);
    const answers = await sendChats(stack.bot.url, chats);
    answers.forEach((a, i) => {
      expect(a, chats[i]!.marker).toMatchObject({ status: 200, reply: chats[i]!.expectedReply });
      expect(a.rolloutId).toBeTruthy();
    });
    expect(new Set(answers.map((a) => a.rolloutId)).size).toBe(200);

    const stored = await waitFor('200 finished rollouts with 2 LLM calls each', async () => {
      const all = await readStore(stack.store.url);
      const done = all.filter((r) => r.rollout.status === 'succeeded' && r.transitions.length === 2);
      return done.length === 200 && all.length === 200 ? all : undefined;
    });
    const byId = new Map(stored.map((r) => [r.rollout.rolloutId, r]));
    answers.forEach((a, i) => {
      const r = byId.get(a.rolloutId!);
      expect(r, `rollout of ${chats[i]!.marker}`).toBeDefined();
      expect(r!.rollout.mode).toBeNull();
      expect(r!.rollout.metadata).toMatchObject({ source: 'production', agent_name: 'support-bot' });
      // Its spans hold its own marker and no other request's; both LLM calls saw it.
      expect([...markersIn(r!.spans, run)]).toEqual([chats[i]!.marker]);
      for (const t of r!.transitions) expect(JSON.stringify(t.state)).toContain(chats[i]!.marker);
      expect(r!.transitions.at(-1)!.reward).toBeNull();
    });
    expect((await serviceStats(stack.bot.url)).dropped).toBe(0);

    // The dashboard has seen them (and may have cached them) before the feedback arrives.
    const summary = async (id: string): Promise<{ final_reward: number | null }> =>
      (await (await fetch(`${stack.store.url}/v1/agl/ext/rollouts/${id}`)).json()) as { final_reward: number | null };
    const rated = answers
      .slice(0, 50)
      .map((a, i) => ({ rolloutId: a.rolloutId!, reward: (i % 5) / 4, comment: `#${i}` }));
    for (const r of rated.slice(0, 5)) expect((await summary(r.rolloutId)).final_reward).toBeNull();

    // A third process: a script calling feedback() from @agl/client, as a support tool would, minutes later.
    const sender = spawn(process.execPath, [...SOURCE_FLAGS, 'src/send-feedback-main.ts', JSON.stringify(rated)], {
      cwd: EXAMPLE_DIR,
      env: { ...process.env, AGL_STORE_URL: stack.store.url, NODE_OPTIONS: '' },
      stdio: 'inherit',
    });
    const [code] = (await once(sender, 'exit')) as [number | null];
    expect(code).toBe(0);

    const after = new Map((await readStore(stack.store.url)).map((r) => [r.rollout.rolloutId, r]));
    const ratedIds = new Set(rated.map((r) => r.rolloutId));
    for (const r of rated) {
      expect(after.get(r.rolloutId)!.transitions.at(-1)!.reward, r.comment).toBe(r.reward);
      expect((await summary(r.rolloutId)).final_reward, `dashboard ${r.comment}`).toBe(r.reward);
    }
    const unrated = [...after.values()].filter((r) => !ratedIds.has(r.rollout.rolloutId));
    expect(unrated).toHaveLength(150);
    for (const r of unrated) expect(r.transitions.map((t) => t.reward)).toEqual([null, null]);
  });
});
