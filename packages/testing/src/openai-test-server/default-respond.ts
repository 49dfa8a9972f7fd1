import type { TestLlmReply, TestLlmRequest } from './types';

const ARITH = /(-?\d+(?:\.\d+)?)\s*([+\-*/x×])\s*(-?\d+(?:\.\d+)?)/u;

/** Evaluate the first `a op b` in a text, or undefined. */
export function solveArithmetic(text: string): number | undefined {
  const m = ARITH.exec(text);
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = Number(m[3]);
  switch (m[2]) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '/':
      return b === 0 ? undefined : a / b;
    default:
      return a * b;
  }
}

/**
 * The default script: if the last user/tool message holds `a op b`, answer the number; otherwise echo the last user
 * message as `Echo: …`. With tools offered and no tool result yet, it calls the first tool with `{ "input": <last user
 * message> }`.
 */
export function defaultRespond(request: TestLlmRequest): TestLlmReply {
  const last = [...request.messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
  const text = last?.content ?? '';
  const hasToolResult = request.messages.some((m) => m.role === 'tool');
  const firstTool = request.tools[0];
  if (firstTool && !hasToolResult) {
    return { toolCalls: [{ name: firstTool.name, arguments: { input: text } }] };
  }
  const answer = solveArithmetic(text);
  return { content: answer === undefined ? `Echo: ${text}` : String(answer) };
}
