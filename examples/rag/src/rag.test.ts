import { TraceToTransitions } from '@agl/core/transitions';
import { SqliteStore } from '@agl/store/sqlite';
import { useOfflineExampleRun } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { answerF1, exactMatch, normalizeAnswer } from './answer-metrics';
import { CORPUS, CorpusSearch, RAG_QUESTIONS } from './corpus-search';
import { ragRuleLlm } from './rag-rule-llm';
import { runRag } from './run-rag';

describe('answer metrics and BM25 search', () => {
  it('F1 and exact match follow the SQuAD normalisation', () => {
    expect(normalizeAnswer('The  Grey Heron!')).toBe('grey heron');
    expect(exactMatch('the Grey Heron', ['Grey Heron'])).toBe(1);
    expect(exactMatch('12,400 people', ['12,400'])).toBe(0);
    expect(answerF1('12,400 people', ['12,400'])).toBeCloseTo(2 / 3, 6);
    expect(answerF1('Imre Dalvik', ['Ottila Brask'])).toBe(0);
    expect(answerF1('1,284 metres', ['1,284 metres', '1,284'])).toBe(1);
  });

  it('finds the document that holds the fact, and ranks the exact entity above a near namesake', () => {
    const index = new CorpusSearch();
    expect(CORPUS).toHaveLength(22);
    expect(index.search('What is the population of Tarsk?', 2).map((h) => h.id)).toContain('d02');
    expect(index.search('Who is the mayor of Corvenn?', 1)[0]?.id).toBe('d08');
    expect(index.search('Morrow Trench depth', 1)[0]?.id).toBe('d19');
  });
});

describe('the RAG agent offline (OpenAI Agents JS → test server; spans by @agl/openai-agents → SQLite store)', () => {
  const suite = useOfflineExampleRun({ respond: ragRuleLlm, dirPrefix: 'agl-rag-' }, runRag);

  it('runs every question as a rollout and scores it: most right, units cost F1, the multi-hop question fails', () => {
    expect(suite.result().outcomes).toHaveLength(RAG_QUESTIONS.length);
    const by = new Map(suite.result().outcomes.map((o) => [o.taskId, o]));
    expect(by.get('q06')).toMatchObject({ answer: 'Ottila Brask', f1: 1, exactMatch: 1, llmCalls: 2 });
    expect(by.get('q02')).toMatchObject({ answer: '12,400 people', exactMatch: 0 });
    expect(by.get('q02')!.f1).toBeCloseTo(2 / 3, 6);
    expect(by.get('q16')).toMatchObject({ f1: 0, exactMatch: 0 });
    expect(suite.result().meanExactMatch).toBeGreaterThan(0.5);
    expect(suite.result().meanExactMatch).toBeLessThan(1);
    expect(suite.result().meanF1).toBeGreaterThanOrEqual(suite.result().meanExactMatch);
  });

  it('the store holds the tool call, the search span and token ids from the server', async () => {
    const store = new SqliteStore({ path: suite.result().storePath });
    try {
      const rolloutId = suite.result().outcomes.find((o) => o.taskId === 'q06')!.rolloutId;
      const spans = (await store.querySpans({ rolloutId })).items;
      expect(spans.some((s) => s.attributes['tool.name'] === 'search')).toBe(true);
      const [call, answer] = new TraceToTransitions({ agentMatch: 'rag_agent' }).transitions(spans);
      expect(call!.action.message.toolCalls?.[0]).toMatchObject({ name: 'search' });
      expect(answer!.state.messages.at(-1)).toMatchObject({ role: 'tool' });
      expect(String(answer!.state.messages.at(-1)!.content)).toContain('The mayor of Corvenn is Ottila Brask.');
      expect(answer!.action.tokenIds?.length).toBeGreaterThan(0);
      expect(answer!.reward).toBe(1);
    } finally {
      await store.close();
    }
  });
});
