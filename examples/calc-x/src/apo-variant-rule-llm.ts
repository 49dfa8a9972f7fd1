import { adviceCollector, failedRuns, ruleEdit, ruleMerge, type TestLlmReply, type TestLlmRequest } from '@agl/testing';

/** Advice the calc agent's prompt can hold; the rule-based agent model follows each only when its prompt holds it. */
export const CALC_ADVICE = {
  tool: 'Always call the calc tool with the whole expression; never compute in your head.',
  format: 'Answer with only the number, no words.',
  exact: "Copy the calc tool's result exactly; never round it.",
} as const;
/** An edit that sounds helpful and is not. */
export const CALC_HARMFUL = 'Round the result to the nearest hundred for readability.';

function roundTo(value: bigint, step: bigint): bigint {
  const r = ((value % step) + step) % step;
  return r * 2n >= step ? value - r + step : value - r;
}

/** What the rule model answers for a final value under its system prompt. */
function finalReply(system: string, value: bigint): string {
  const rounded = system.includes('round') && !system.includes('never round') ? roundTo(value, 100n) : value;
  return system.includes('only the number') ? String(rounded) : `The answer is ${rounded}.`;
}

/**
 * A deterministic stand-in for the Calc-X agent model and APO's critique and edit models, for
 * `startOpenAiTestServer`. The agent model calls `calc` only when its system prompt tells it to (otherwise it adds and
 * subtracts in its head and guesses products to the nearest thousand), answers in a sentence unless told to give only
 * the number, and rounds when a (harmful) edit told it to. The critic diagnoses failed runs from what it can see; the
 * editor appends critique points and sometimes the harmful line.
 */
export function calcApoRuleLlm(request: TestLlmRequest): TestLlmReply {
  const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  if (request.tools.some((t) => t.name === 'calc')) return agent(request);
  if (user.includes('<experiment ')) return { content: critique(user) };
  if (user.includes('<prompt_a>')) return { content: ruleMerge(user) };
  if (user.includes('<critique>')) return { content: ruleEdit(user, CALC_HARMFUL) };
  return { error: { status: 400, message: 'the Calc-X rule LLM does not know this request' } };
}

function agent(request: TestLlmRequest): TestLlmReply {
  const system = (request.messages.find((m) => m.role === 'system')?.content ?? '').toLowerCase();
  const question = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const tool = [...request.messages].reverse().find((m) => m.role === 'tool');
  if (tool)
    return {
      content: /^-?\d+$/u.test(tool.content) ? finalReply(system, BigInt(tool.content)) : 'I could not compute it.',
    };
  if (system.includes('calc tool')) return { toolCalls: [{ name: 'calc', arguments: { e: question } }] };
  const m = /^(-?\d+)([-+*])(-?\d+)$/u.exec(question.trim());
  if (!m) return { content: 'I do not know.' };
  const a = BigInt(m[1]!);
  const b = BigInt(m[3]!);
  const value = m[2] === '+' ? a + b : m[2] === '-' ? a - b : roundTo(a * b, 1000n);
  return { content: finalReply(system, value) };
}

function critique(text: string): string {
  const { found, add } = adviceCollector(text);
  for (const body of failedRuns(text)) {
    const final = [...body.matchAll(/^\[assistant\] (.*)$/gmu)].at(-1)?.[1] ?? '';
    const toolResult = /^\[tool\] (.*)$/mu.exec(body)?.[1];
    if (!/^-?\d+$/u.test(final.trim())) add(CALC_ADVICE.format);
    if (toolResult === undefined) add(CALC_ADVICE.tool);
    else if (!final.includes(toolResult)) add(CALC_ADVICE.exact);
  }
  const prefix = text.includes('- Critique:') ? 'Critique: ' : '';
  return found
    .slice(0, 2)
    .map((b) => `- ${prefix}${b}`)
    .join('\n');
}
