import type { ServerResponse } from 'node:http';
import { sendJson, type SseWriter } from './http-io';
import type { ReplyPlan } from './reply-plan';

function stopReason(plan: ReplyPlan): string {
  if (plan.toolCalls.length > 0) return 'tool_use';
  return plan.finishReason === 'length' ? 'max_tokens' : 'end_turn';
}

function toolUseId(id: string): string {
  return id.startsWith('toolu_') ? id : `toolu_${id.replace(/^call_/u, '')}`;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

/** Non-streaming Anthropic `message` body with text and `tool_use` blocks. */
export function anthropicMessageBody(plan: ReplyPlan): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (plan.content !== '' || plan.toolCalls.length === 0) content.push({ type: 'text', text: plan.content });
  for (const c of plan.toolCalls)
    content.push({ type: 'tool_use', id: toolUseId(c.id), name: c.name, input: parseArgs(c.arguments) });
  return {
    id: `msg_${plan.id.slice(4)}`,
    type: 'message',
    role: 'assistant',
    model: plan.model,
    content,
    stop_reason: stopReason(plan),
    stop_sequence: null,
    usage: { input_tokens: plan.promptTokenIds.length, output_tokens: plan.completionTokenIds.length },
  };
}

export function sendAnthropicMessage(res: ServerResponse, plan: ReplyPlan): void {
  sendJson(res, 200, anthropicMessageBody(plan));
}

/** Stream Anthropic's event sequence: message_start, content blocks, message_delta, message_stop. */
export async function streamAnthropicMessage(sse: SseWriter, plan: ReplyPlan): Promise<void> {
  const emit = (type: string, data: Record<string, unknown>): Promise<void> => sse.send({ type, ...data }, type);
  const full = anthropicMessageBody(plan);
  await emit('message_start', {
    message: {
      ...full,
      content: [],
      stop_reason: null,
      usage: { input_tokens: plan.promptTokenIds.length, output_tokens: 1 },
    },
  });
  let index = 0;
  if (plan.content !== '' || plan.toolCalls.length === 0) {
    await emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
    await emit('ping', {});
    for (const piece of plan.pieces)
      await emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
    await emit('content_block_stop', { index });
    index += 1;
  }
  for (const c of plan.toolCalls) {
    await emit('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: toolUseId(c.id), name: c.name, input: {} },
    });
    const half = Math.ceil(c.arguments.length / 2);
    for (const part of [c.arguments.slice(0, half), c.arguments.slice(half)]) {
      if (part !== '')
        await emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    await emit('content_block_stop', { index });
    index += 1;
  }
  await emit('message_delta', {
    delta: { stop_reason: stopReason(plan), stop_sequence: null },
    usage: { output_tokens: plan.completionTokenIds.length },
  });
  await emit('message_stop', {});
  sse.end();
}
