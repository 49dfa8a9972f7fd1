import type { ServerResponse } from 'node:http';
import { sendJson, type SseWriter } from './http-io';
import { logprobsContent, type ReplyPlan } from './reply-plan';

type Item = Record<string, unknown>;

function messageItem(plan: ReplyPlan, done: boolean): Item {
  return {
    type: 'message',
    id: `msg_${plan.id.slice(5)}`,
    status: done ? 'completed' : 'in_progress',
    role: 'assistant',
    content: done ? [outputText(plan, plan.content)] : [],
  };
}

function outputText(plan: ReplyPlan, text: string): Item {
  return {
    type: 'output_text',
    text,
    annotations: [],
    ...(plan.logprobs ? { logprobs: logprobsContent(plan.pieces) } : {}),
  };
}

function functionItems(plan: ReplyPlan, done: boolean): Item[] {
  return plan.toolCalls.map((c, i) => ({
    type: 'function_call',
    id: `fc_${plan.id.slice(5)}${i}`,
    call_id: c.id,
    name: c.name,
    arguments: done ? c.arguments : '',
    status: done ? 'completed' : 'in_progress',
  }));
}

/** The full `response` object of the Responses API. */
export function responseBody(plan: ReplyPlan, status: 'in_progress' | 'completed'): Record<string, unknown> {
  const done = status === 'completed';
  const output: Item[] = [];
  if (done) {
    if (plan.content !== '' || plan.toolCalls.length === 0) output.push(messageItem(plan, true));
    output.push(...functionItems(plan, true));
  }
  const p = plan.promptTokenIds.length;
  const c = plan.completionTokenIds.length;
  return {
    id: plan.id,
    object: 'response',
    created_at: plan.created,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    model: plan.model,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: done
      ? {
          input_tokens: p,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: c,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: p + c,
        }
      : null,
  };
}

export function sendResponse(res: ServerResponse, plan: ReplyPlan): void {
  sendJson(res, 200, responseBody(plan, 'completed'));
}

/** Stream the Responses API event sequence (created … output_text.delta … completed). */
export async function streamResponse(sse: SseWriter, plan: ReplyPlan): Promise<void> {
  let seq = 0;
  const emit = (type: string, data: Record<string, unknown>): Promise<void> =>
    sse.send({ type, sequence_number: seq++, ...data }, type);
  await emit('response.created', { response: responseBody(plan, 'in_progress') });
  await emit('response.in_progress', { response: responseBody(plan, 'in_progress') });
  let outputIndex = 0;
  if (plan.content !== '' || plan.toolCalls.length === 0) {
    const item = messageItem(plan, false);
    const itemId = item.id;
    await emit('response.output_item.added', { output_index: outputIndex, item });
    await emit('response.content_part.added', {
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const piece of plan.pieces) {
      await emit('response.output_text.delta', {
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    }
    await emit('response.output_text.done', {
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      text: plan.content,
      logprobs: [],
    });
    await emit('response.content_part.done', {
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part: outputText(plan, plan.content),
    });
    await emit('response.output_item.done', { output_index: outputIndex, item: messageItem(plan, true) });
    outputIndex += 1;
  }
  const started = functionItems(plan, false);
  const finished = functionItems(plan, true);
  for (const [i, item] of started.entries()) {
    await emit('response.output_item.added', { output_index: outputIndex, item });
    const args = String(finished[i]?.arguments ?? '');
    await emit('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: args });
    await emit('response.function_call_arguments.done', {
      item_id: item.id,
      output_index: outputIndex,
      arguments: args,
    });
    await emit('response.output_item.done', { output_index: outputIndex, item: finished[i] });
    outputIndex += 1;
  }
  await emit('response.completed', { response: responseBody(plan, 'completed') });
  sse.end();
}
