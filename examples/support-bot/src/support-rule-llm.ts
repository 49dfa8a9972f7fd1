import {
  adviceCollector,
  failedRuns,
  judgeRuleLlm,
  ruleEdit,
  ruleMerge,
  type TestLlmReply,
  type TestLlmRequest,
} from '@agl/testing';
import { ORDER_ID } from './orders';

/** The sign-off the rubric asks for; the scripted agent adds it only when its prompt tells it to. */
export const THANKS = 'Thank you for shopping with us.';
const ADVICE = `End every answer with: ${THANKS}`;
/** An edit the scripted editor sometimes makes, which lowers the judge's score (APO must drop it). */
const HARMFUL = 'Answer with one word only.';

/**
 * The scripted test LLM of the offline run (served by `startOpenAiTestServer`): when the customer names an order and
 * no tool result is in the conversation yet, it calls `order_status` with that id; once the tool answered, it repeats
 * the tool's line (plus {@link THANKS} when its system prompt asks for it, only the first word when the prompt says "one
 * word"); without an order id it asks for one. Any model name plays the agent (a fine-tuned one too).
 */
export function supportRuleLlm(request: TestLlmRequest): TestLlmReply {
  const question = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const toolResult = [...request.messages].reverse().find((m) => m.role === 'tool')?.content;
  const system = request.messages.find((m) => m.role === 'system')?.content ?? '';
  if (toolResult !== undefined) {
    if (system.includes('one word')) return { content: toolResult.split(' ')[0] ?? '' };
    return { content: system.includes(THANKS) ? `${toolResult} ${THANKS}` : toolResult };
  }
  const orderId = ORDER_ID.exec(question)?.[0];
  if (orderId && request.tools.some((t) => t.name === 'order_status'))
    return { toolCalls: [{ name: 'order_status', arguments: { orderId } }] };
  return { content: 'I can look that up: what is your order number (like A-1002)?' };
}

/** APO's critic: for each quoted run the judge scored below 1 whose answer lacks the sign-off, it asks for it. */
function critique(text: string): string {
  const { found, add } = adviceCollector(text);
  for (const run of failedRuns(text)) if (!run.toLowerCase().includes('thank you')) add(ADVICE);
  return found.map((advice) => `- ${advice}`).join('\n');
}

/**
 * The whole offline loop's LLM (`npm run test-servers`): `judge-model` scores a transcript with the rubric's
 * `- must: <word>` lines (JSON, as `agl judge` asks), `critic-model` and `editor-model` play APO's critique and edit
 * calls, and every other model is the support agent of {@link supportRuleLlm}.
 */
export const loopRuleLlm = judgeRuleLlm({
  fallback: (request) => {
    const user = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    if (request.model === 'critic-model') return { content: critique(user) };
    if (request.model === 'editor-model')
      return { content: user.includes('<prompt_a>') ? ruleMerge(user) : ruleEdit(user, HARMFUL) };
    return supportRuleLlm(request);
  },
});
