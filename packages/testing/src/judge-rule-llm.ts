import { between } from './apo-rule-editor';
import type { TestLlmReply, TestLlmRequest } from './openai-test-server/index';

/**
 * A deterministic stand-in for an LLM judge (structured output, `response_format: json_schema`). The score of one
 * transcript is the mean of the rubric's `- must: <word>` lines whose word the transcript's last `[assistant]` message
 * contains (case-insensitive), or `gradeTranscript` when given. Models:
 * - `judge-model`: answers `{reward, rationale}` (rubric) or `{scores: [{id, reward, rationale}]}` (group);
 * - `broken-judge`: always answers prose, never JSON;
 * - `flaky-judge`: answers prose the first time it sees a request, JSON after.
 * Any other model gets `fallback(request)` or a 404.
 */
export function judgeRuleLlm(
  options: {
    gradeTranscript?: (transcript: string, rubric: string) => number;
    fallback?: (request: TestLlmRequest) => TestLlmReply;
  } = {},
): (request: TestLlmRequest) => TestLlmReply {
  const seen = new Set<string>();
  const grade = options.gradeTranscript ?? gradeByMustWords;
  return (request) => {
    const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
    const format = request.body.response_format as { json_schema?: { name?: string } } | undefined;
    const judging = ['judge-model', 'broken-judge', 'flaky-judge'].includes(request.model);
    if (!judging || !format?.json_schema?.name) {
      return options.fallback?.(request) ?? { error: { status: 404, message: `unknown model ${request.model}` } };
    }
    if (request.model === 'broken-judge') return { content: 'The agent did fine, I would say 8/10.' };
    if (request.model === 'flaky-judge' && !seen.has(user)) {
      seen.add(user);
      return { content: 'Let me think about this one...' };
    }
    const rubric = between(user, 'rubric');
    if (format.json_schema.name === 'judge_score') {
      const reward = grade(between(user, 'transcript'), rubric);
      return { content: JSON.stringify({ reward, rationale: `meets ${Math.round(reward * 100)}% of the rubric` }) };
    }
    const attempts = [...user.matchAll(/<attempt id="(\d+)">\n([\s\S]*?)\n<\/attempt>/gu)];
    const raw = attempts.map((m) => grade(m[2] ?? '', rubric));
    // Relative ranking: the best attempt gets 1, the worst 0, the others spread by rank between.
    const order = [...new Set(raw)].sort((a, b) => a - b);
    const scores = attempts.map((m, i) => ({
      id: m[1],
      reward: order.length === 1 ? 0.5 : order.indexOf(raw[i] as number) / (order.length - 1),
      rationale: `rank ${order.indexOf(raw[i] as number) + 1} of ${order.length}`,
    }));
    return { content: JSON.stringify({ scores }) };
  };
}

/** The share of the rubric's `- must: <word>` words that the last `[assistant]` line of the transcript contains. */
export function gradeByMustWords(transcript: string, rubric: string): number {
  const words = [...rubric.matchAll(/^- must: (.+)$/gmu)].map((m) => (m[1] as string).trim().toLowerCase());
  const answer = ([...transcript.matchAll(/^\[assistant\] (.*)$/gmu)].at(-1)?.[1] ?? '').toLowerCase();
  if (words.length === 0) return 0;
  return words.filter((w) => answer.includes(w)).length / words.length;
}
