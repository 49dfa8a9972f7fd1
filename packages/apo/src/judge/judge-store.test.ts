import { join } from 'node:path';
import { findFinalReward } from '@agl/core/transitions';
import { SqliteStore } from '@agl/store/sqlite';
import { MemoryStore } from '@agl/store';
import { judgeRuleLlm, seedRecorded, useTestLlmAndDir } from '@agl/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { ChatClient } from '../chat-client';
import { FileJudgeCache, judgeAgreement, judgeStore, LlmJudge, rubricHash } from './index';

const RUBRIC = 'Apologise and offer a refund.\n- must: sorry\n- must: refund';
const ANSWERS = ['Sorry, a refund is on its way.', 'Sorry for that.', 'No.', 'A refund was sent.'];

const suite = useTestLlmAndDir({ respond: judgeRuleLlm(), dirPrefix: 'agl-judge-store-' });
const calls = (): number => suite.llm.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

beforeEach(() => void suite.llm.requests.splice(0));

const judgeOf = (options: { model?: string; maxTotalTokens?: number; cache?: string } = {}) =>
  new LlmJudge({
    client: new ChatClient({ baseURL: suite.llm.baseURL, retryBaseDelayMs: 1, maxTotalTokens: options.maxTotalTokens }),
    model: options.model ?? 'judge-model',
    rubric: RUBRIC,
    cache: options.cache ? new FileJudgeCache(options.cache) : undefined,
    maxParseRetries: 1,
  });

async function spansOf(store: SqliteStore | MemoryStore, rolloutId: string) {
  return (await store.querySpans({ rolloutId, attemptId: 'latest', sortBy: 'sequenceId' })).items;
}

describe('judgeStore (offline judging of a SQLite store file)', () => {
  it('writes one judge reward span per rollout with model, rubric hash, rationale and mode; a re-run pays nothing', async () => {
    const store = new SqliteStore({ path: join(suite.dir, 'rubric.sqlite') });
    const ids: string[] = [];
    for (const [i, answer] of ANSWERS.entries())
      ids.push(await seedRecorded(store, { input: { q: i }, conversation: { user: 'my parcel is late', answer } }));
    ids.push(
      await seedRecorded(store, { input: { q: 'rewarded' }, conversation: { user: 'hi', answer: 'Sorry' }, reward: 1 }),
    );
    const cache = join(suite.dir, 'rubric-cache.jsonl');
    const report = await judgeStore(store, judgeOf({ cache }), { onlyUnrewarded: true, concurrency: 2 });
    expect(report).toMatchObject({
      rollouts: 5,
      judged: 4,
      cached: 0,
      rewarded: 1,
      alreadyJudged: 0,
      failures: [],
      budgetExhausted: null,
    });
    expect(report.usage.calls).toBe(4);
    const expected = [1, 0.5, 0, 0.5];
    for (const [i, id] of ids.slice(0, 4).entries()) {
      const judge = (await spansOf(store, id)).filter((s) => s.attributes['agl.reward.source'] === 'judge');
      expect(judge).toHaveLength(1);
      expect(judge[0]?.attributes).toMatchObject({
        'agentlightning.reward.0.name': 'primary',
        'agentlightning.reward.0.value': expected[i],
        'agl.judge.model': 'judge-model',
        'agl.judge.rubric_hash': rubricHash(RUBRIC),
        'agl.judge.rationale': `meets ${expected[i]! * 100}% of the rubric`,
        'agl.judge.mode': 'rubric',
      });
      expect(findFinalReward(await spansOf(store, id))).toBe(expected[i]);
    }
    expect((await spansOf(store, ids[4]!)).some((s) => s.attributes['agl.reward.source'] === 'judge')).toBe(false);
    // Re-run on the same store: every rollout is already judged by this model and rubric: 0 calls, 0 spans.
    suite.llm.requests.splice(0);
    const again = await judgeStore(store, judgeOf({ cache }), { onlyUnrewarded: true });
    expect(again).toMatchObject({ judged: 0, alreadyJudged: 4, rewarded: 1 });
    expect(calls()).toBe(0);
    // Same rollouts in a fresh store: the cache file answers, still 0 calls.
    const copy = new MemoryStore();
    for (const [i, answer] of ANSWERS.entries())
      await seedRecorded(copy, { input: { q: i }, conversation: { user: 'my parcel is late', answer } });
    const fromCache = await judgeStore(copy, judgeOf({ cache }));
    expect(fromCache).toMatchObject({ judged: 4, cached: 4 });
    expect(calls()).toBe(0);
    await store.close();
  });

  it('--group-by task: the rollouts of one task are scored together in one group call', async () => {
    const store = new MemoryStore();
    const task = (t: string, answer: string) =>
      seedRecorded(store, { input: { t }, metadata: { task_id: t }, conversation: { user: t, answer } });
    const a = [await task('A', 'No.'), await task('A', 'Sorry, refund.'), await task('A', 'Sorry.')];
    const b = [await task('B', 'Refund.')];
    const report = await judgeStore(store, judgeOf(), { groupBy: 'task' });
    expect(report.judged).toBe(4);
    expect(calls()).toBe(2);
    const score = async (id: string) =>
      (await spansOf(store, id)).find((s) => s.attributes['agl.reward.source'] === 'judge')?.attributes;
    expect(await Promise.all(a.map(async (id) => (await score(id))?.['agentlightning.reward.0.value']))).toEqual([
      0, 1, 0.5,
    ]);
    expect(await score(a[0]!)).toMatchObject({ 'agl.judge.mode': 'group', 'agl.judge.rationale': 'rank 1 of 3' });
    expect(await score(b[0]!)).toMatchObject({ 'agl.judge.mode': 'rubric', 'agentlightning.reward.0.value': 0.5 });
  });

  it('reports answers that never parse as failures and writes no reward', async () => {
    const store = new MemoryStore();
    const id = await seedRecorded(store, { input: 1, conversation: { user: 'x', answer: 'Sorry' } });
    const report = await judgeStore(store, judgeOf({ model: 'broken-judge' }));
    expect(report.judged).toBe(0);
    expect(report.failures).toEqual([
      { rolloutIds: [id], message: expect.stringMatching(/broken-judge gave no usable rubric score after 2 tries/u) },
    ]);
    expect(calls()).toBe(2);
    expect(findFinalReward(await spansOf(store, id))).toBeNull();
  });

  it('stops cleanly when the token budget is spent: in-flight scores kept, the rest counted as not judged', async () => {
    const store = new MemoryStore();
    for (const [i, answer] of ANSWERS.entries())
      await seedRecorded(store, { input: i, conversation: { user: 'x', answer } });
    const report = await judgeStore(store, judgeOf({ maxTotalTokens: 10 }), { concurrency: 1 });
    expect(report).toMatchObject({ judged: 1, notJudged: 3, failures: [] });
    expect(report.budgetExhausted).toMatch(/LLM token budget spent: \d+ of maxTotalTokens=10\. Raise maxTotalTokens/u);
    expect(calls()).toBe(1);
  });
});

describe('judgeAgreement', () => {
  it('Spearman rho and accuracy at the threshold between judge scores and user feedback (seeded store)', async () => {
    const store = new SqliteStore({ path: join(suite.dir, 'agreement.sqlite') });
    const judge = [0.1, 0.4, 0.35, 0.8, 0.9];
    const feedback = [0, 0.2, 0.6, 0.7, 1];
    const ids: string[] = [];
    const attrs = { 'agl.judge.model': 'judge-model', 'agl.judge.rubric_hash': 'abc' };
    for (const [i, j] of judge.entries())
      ids.push(
        await seedRecorded(store, {
          input: i,
          judge: j,
          judgeAttributes: attrs,
          feedback: i === 2 ? [0, feedback[i]!] : [feedback[i]!],
        }),
      );
    await seedRecorded(store, { input: 'judge only', judge: 0.9, judgeAttributes: attrs });
    await seedRecorded(store, { input: 'feedback only', feedback: [1] });
    await seedRecorded(store, {
      input: 'other model',
      judge: 0,
      judgeAttributes: { 'agl.judge.model': 'other' },
      feedback: [1],
    });
    const report = await judgeAgreement(store, { model: 'judge-model' });
    // Ranks: judge 1,3,2,4,5 vs feedback 1..5: sum d² = 2, rho = 1 - 6·2 / (5·24) = 0.9. Same side of 0.5: 4 of 5.
    expect(report.pairs).toBe(5);
    expect(report.rho).toBeCloseTo(0.9, 12);
    expect(report.accuracy).toBe(0.8);
    expect(report.items.map((p) => p.rolloutId)).toEqual(ids);
    expect(report.items[2]).toMatchObject({ judge: 0.35, feedback: 0.6 });
    const all = await judgeAgreement(store, { threshold: 0.3 });
    expect(all.pairs).toBe(6);
    expect((await judgeAgreement(store, { rubricHash: 'nope' })).pairs).toBe(0);
    expect((await judgeAgreement(store, { rubricHash: 'nope' })).rho).toBeNull();
    await store.close();
  });
});
