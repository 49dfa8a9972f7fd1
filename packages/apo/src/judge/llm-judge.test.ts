import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { grpoAdvantages } from '@agl/core/algorithms';
import { BudgetExceededError } from '@agl/core/errors';
import { MemoryStore } from '@agl/store';
import { judgeRuleLlm, seedRecorded, useTestLlmAndDir } from '@agl/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { ChatClient } from '../chat-client';
import {
  FileJudgeCache,
  groupRewards,
  JudgeAnswerError,
  LlmJudge,
  rolloutTranscript,
  rubricHash,
  rubricReward,
  spearmanRho,
} from './index';

const RUBRIC = 'The reply must be polite and offer a refund.\n- must: sorry\n- must: refund';

const suite = useTestLlmAndDir({ respond: judgeRuleLlm(), dirPrefix: 'agl-judge-' });
const calls = (): number => suite.llm.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
const judgeOf = (model = 'judge-model', extra: Partial<ConstructorParameters<typeof ChatClient>[0]> = {}) =>
  new LlmJudge({
    client: new ChatClient({ baseURL: suite.llm.baseURL, retryBaseDelayMs: 1, ...extra }),
    model,
    rubric: RUBRIC,
  });

beforeEach(() => void suite.llm.requests.splice(0));

describe('rolloutTranscript', () => {
  it("rebuilds task, prompts, tool call, tool result and final answer from a rollout's spans", async () => {
    const store = new MemoryStore();
    const id = await seedRecorded(store, {
      input: { order: 42 },
      conversation: {
        user: 'Where is order 42?',
        answer: 'Sorry, it is late; here is a refund.',
        tool: { name: 'track', arguments: '{"order":42}', result: 'delayed' },
      },
      reward: 1,
      judge: 0.5,
    });
    const spans = (await store.querySpans({ rolloutId: id })).items;
    expect(rolloutTranscript(spans, { order: 42 })).toBe(
      [
        '<task>\n{"order":42}\n</task>',
        '[system] You are a helpful assistant.',
        '[user] Where is order 42?',
        '[assistant tool call call_1] track({"order":42})',
        '[tool result call_1] delayed',
        '[assistant] Sorry, it is late; here is a refund.',
      ].join('\n'),
    );
    expect(rolloutTranscript([])).toBe('(no LLM calls recorded)');
  });
});

describe('LlmJudge over real HTTP (scripted judge model)', () => {
  it('rubric mode: one call with a json_schema response format, a reward in [0, 1] and a rationale', async () => {
    const judge = judgeOf();
    const score = await judge.rubric('[user] my parcel is late\n[assistant] Sorry! I can offer a refund.');
    expect(score).toEqual({ reward: 1, rationale: 'meets 100% of the rubric', cached: false });
    expect(await rubricReward(judge, '[user] late\n[assistant] Sorry about that.')).toBe(0.5);
    expect(calls()).toBe(2);
    const body = suite.llm.requests[0]?.body as {
      response_format: { type: string; json_schema: { name: string; strict: boolean } };
      temperature: number;
    };
    expect(body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'judge_score', strict: true },
    });
    expect(body.temperature).toBe(0);
    expect(judge.rubricHash).toBe(rubricHash(RUBRIC));
    expect(judge.rubricHash).toMatch(/^[0-9a-f]{16}$/u);
  });

  it('group mode: N runs of one task in one call, one relative score each, usable as GRPO rewards', async () => {
    const judge = judgeOf();
    const runs = [
      '[assistant] No.',
      '[assistant] Sorry, here is a refund.',
      '[assistant] Sorry.',
      '[assistant] Sorry, refund sent.',
    ];
    const rewards = await groupRewards(judge, runs);
    expect(calls()).toBe(1);
    expect(rewards).toEqual([0, 1, 0.5, 1]);
    const user = (suite.llm.requests[0]?.body as { messages: { content: string }[] }).messages[1]?.content ?? '';
    expect(user.match(/<attempt id="\d">/gu)).toHaveLength(4);
    const advantages = grpoAdvantages({ scores: rewards, groupIds: ['t', 't', 't', 't'] });
    expect(advantages[1]).toBeGreaterThan(0);
    expect(advantages[0]).toBeLessThan(0);
  });

  it('caches by transcript, rubric and model: the second run makes 0 calls, even from a new process (file cache)', async () => {
    const path = join(suite.dir, 'cache', 'judge-cache.jsonl');
    const client = new ChatClient({ baseURL: suite.llm.baseURL });
    const make = (model = 'judge-model', rubric = RUBRIC) =>
      new LlmJudge({ client, model, rubric, cache: new FileJudgeCache(path) });
    const transcripts = ['[assistant] Sorry, refund.', '[assistant] Refund.'];
    const first = await Promise.all([make().rubric(transcripts[0]!), make().group(transcripts)]);
    expect(calls()).toBe(2);
    expect(first[0].cached).toBe(false);
    const again = await Promise.all([make().rubric(transcripts[0]!), make().group(transcripts)]);
    expect(calls()).toBe(2);
    expect(again[0]).toEqual({ ...first[0], cached: true });
    expect(again[1].map((s) => s.reward)).toEqual(first[1].map((s) => s.reward));
    expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(2);
    // Another rubric or model misses.
    await make('judge-model', `${RUBRIC}\n- must: thanks`).rubric(transcripts[0]!);
    await make('flaky-judge').rubric(transcripts[0]!);
    expect(calls()).toBe(5);
  });

  it('retries an answer that does not parse, then fails with JudgeAnswerError (never a reward)', async () => {
    const flaky = judgeOf('flaky-judge');
    expect((await flaky.rubric('[assistant] Sorry, a refund is on its way.')).reward).toBe(1);
    expect(calls()).toBe(2);
    suite.llm.requests.splice(0);
    const broken = new LlmJudge({
      client: new ChatClient({ baseURL: suite.llm.baseURL }),
      model: 'broken-judge',
      rubric: RUBRIC,
      maxParseRetries: 1,
    });
    const error = await broken.rubric('[assistant] hi').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JudgeAnswerError);
    expect((error as JudgeAnswerError).message).toMatch(
      /broken-judge gave no usable rubric score after 2 tries: not JSON/u,
    );
    expect((error as JudgeAnswerError).answer).toContain('8/10');
    expect(calls()).toBe(2);
  });

  it('stops cleanly with BudgetExceededError once the token budget is spent', async () => {
    const judge = judgeOf('judge-model', { maxTotalTokens: 10 });
    await judge.rubric('[assistant] Sorry.');
    const error = await judge.rubric('[assistant] Refund.').catch((e: unknown) => e);
    expect(BudgetExceededError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/LLM token budget spent: \d+ of maxTotalTokens=10/u);
    expect(calls()).toBe(1);
  });
});

describe('spearmanRho', () => {
  it('is 1 / -1 for monotone data, averages tied ranks, and is null without spread', () => {
    expect(spearmanRho([1, 2, 3], [10, 20, 30])).toBe(1);
    expect(spearmanRho([1, 2, 3], [3, 2, 1])).toBe(-1);
    expect(spearmanRho([1, 2, 2, 3], [1, 2, 3, 4])).toBeCloseTo(4.5 / Math.sqrt(22.5), 12);
    expect(spearmanRho([1, 1], [1, 2])).toBeNull();
    expect(spearmanRho([1], [1])).toBeNull();
  });
});
