import type { TestLlmReply, TestLlmRequest } from '@agl/testing';
import { ORDER_ID } from './orders';

/**
 * The scripted test LLM of the offline run (served by `startOpenAiTestServer`): when the customer names an order and
 * no tool result is in the conversation yet, it calls `order_status` with that id; once the tool answered, it repeats
 * the tool's line; without an order id it asks for one.
 */
export function supportRuleLlm(request: TestLlmRequest): TestLlmReply {
  const question = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const toolResult = [...request.messages].reverse().find((m) => m.role === 'tool')?.content;
  if (toolResult !== undefined) return { content: toolResult };
  const orderId = ORDER_ID.exec(question)?.[0];
  if (orderId && request.tools.some((t) => t.name === 'order_status'))
    return { toolCalls: [{ name: 'order_status', arguments: { orderId } }] };
  return { content: 'I can look that up: what is your order number (like A-1002)?' };
}
