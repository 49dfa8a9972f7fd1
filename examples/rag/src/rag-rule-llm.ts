import type { TestLlmReply, TestLlmRequest } from '@agl/testing';

/**
 * A deterministic reader for the offline run, speaking the OpenAI wire protocol through `startOpenAiTestServer`.
 * It knows nothing about Velmora: on the first turn it calls `search` with the question; once a tool result is in the
 * conversation it answers with the value of the sentence "The <attribute> of <entity> is <value>." found there (the
 * whole value, units included), or says it could not find it. Retrieval misses and multi-hop questions therefore fail,
 * and answers with units score partial F1.
 */
export function ragRuleLlm(request: TestLlmRequest): TestLlmReply {
  const question = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const results = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  if (results.length === 0 && request.tools.some((t) => t.name === 'search'))
    return { toolCalls: [{ name: 'search', arguments: { query: question } }] };
  const m = /^(?:What|Who) (?:is|was) the (.+?) of (.+?)\?$/u.exec(question.trim());
  if (!m) return { content: 'I could not find the answer.' };
  const [, attribute = '', entity = ''] = m;
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
  const fact = new RegExp(`The ${escape(attribute)} of ${escape(entity)} (?:is|was) (.+?)\\.(?:\\s|$)`, 'iu');
  for (const text of results) {
    const hit = fact.exec(text);
    if (hit) return { content: hit[1] as string };
  }
  return { content: 'I could not find the answer.' };
}
