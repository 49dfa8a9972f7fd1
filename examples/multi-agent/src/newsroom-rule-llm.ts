import type { TestLlmReply, TestLlmRequest } from '@agl/testing';
import { MAX_WORDS } from './newsroom-tasks';

/**
 * A deterministic stand-in for the writer and reviewer models, for `startOpenAiTestServer`. The writer, sampled at a
 * temperature above 0, cycles through three draft styles per keyword (a counter per task, so a GRPO group of three
 * sees each style once, in any order): a good headline, a too-long one, and a too-long one without the keyword. A revision fixes only the problem the
 * reviewer named. The reviewer checks the length, then the keyword.
 */
export function newsroomRuleLlm(): (request: TestLlmRequest) => TestLlmReply {
  const draws = new Map<string, number>();
  return (request) => {
    const system = request.messages.find((m) => m.role === 'system')?.content ?? '';
    const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const keyword = /Keyword: (.*)/u.exec(user)?.[1]?.trim() ?? '';
    const item = /News item: (.*)/u.exec(user)?.[1] ?? '';
    const words = (s: string): string[] => s.split(/\s+/u).filter(Boolean);
    if (system.startsWith('You are the reviewer')) {
      const headline = /Headline: (.*)/u.exec(user)?.[1] ?? '';
      const n = words(headline).length;
      if (n > MAX_WORDS) return { content: `REVISE: the headline is too long (${n} words; at most ${MAX_WORDS}).` };
      if (!headline.toLowerCase().includes(keyword))
        return { content: `REVISE: the headline must mention "${keyword}".` };
      return { content: 'APPROVE' };
    }
    if (!system.startsWith('You are the writer')) return { error: { status: 400, message: 'unknown role' } };
    const draft = /Your draft: (.*)/u.exec(user)?.[1];
    const feedback = /Reviewer: (.*)/u.exec(user)?.[1] ?? '';
    if (draft !== undefined) {
      if (feedback.includes('too long'))
        return {
          content: words(draft)
            .slice(0, MAX_WORDS - 1)
            .join(' '),
        };
      return {
        content: `${keyword[0]?.toUpperCase()}${keyword.slice(1)}: ${words(draft)
          .slice(0, MAX_WORDS - 2)
          .join(' ')}`,
      };
    }
    const sentence = (item.split('. ')[0] ?? item).replace(/\.$/u, '');
    const temperature = typeof request.body.temperature === 'number' ? request.body.temperature : 0;
    const drawn = draws.get(keyword) ?? 0;
    if (temperature > 0) draws.set(keyword, drawn + 1);
    const style = temperature > 0 ? drawn % 3 : 0;
    if (style === 0)
      return {
        content: `${keyword[0]?.toUpperCase()}${keyword.slice(1)} news: ${words(sentence).slice(0, 5).join(' ')}`,
      };
    if (style === 1) return { content: `${keyword[0]?.toUpperCase()}${keyword.slice(1)}: ${sentence}` };
    return {
      content: words(sentence)
        .filter((w) => !w.toLowerCase().includes(keyword))
        .join(' '),
    };
  };
}
