import type { ServerResponse } from 'node:http';
import { sendJson, type SseWriter } from './http-io';
import { endOpenAiStream, logprobsContent, openAiUsage, type ReplyPlan } from './reply-plan';
import { toyTokenize } from './toy-tokenizer';

/**
 * Non-streaming `chat.completion` body (with vLLM extras when `return_token_ids` was asked). A request with legacy
 * `functions` gets its first call as `message.function_call` (finish reason `function_call`).
 */
export function chatCompletionBody(plan: ReplyPlan): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: plan.toolCalls.length > 0 && plan.content === '' ? null : plan.content,
    refusal: null,
  };
  const legacy = plan.legacyFunctions ? plan.toolCalls[0] : undefined;
  if (legacy) message.function_call = { name: legacy.name, arguments: legacy.arguments };
  else if (plan.toolCalls.length > 0) {
    message.tool_calls = plan.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  const choice: Record<string, unknown> = {
    index: 0,
    message,
    finish_reason: plan.finishReason,
    logprobs: plan.logprobs ? { content: logprobsContent(plan.pieces), refusal: null } : null,
  };
  const body: Record<string, unknown> = {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    choices: [choice],
    usage: openAiUsage(plan),
  };
  if (plan.returnTokenIds) {
    choice.token_ids = plan.completionTokenIds;
    body.prompt_token_ids = plan.promptTokenIds;
    body.prompt_logprobs = null;
  }
  return body;
}

export function sendChatCompletion(res: ServerResponse, plan: ReplyPlan): void {
  sendJson(res, 200, chatCompletionBody(plan));
}

/**
 * Stream `chat.completion.chunk`s: role, content pieces, tool-call deltas (or one legacy `function_call` delta), finish,
 * optional usage chunk, `[DONE]`.
 */
export async function streamChatCompletion(sse: SseWriter, plan: ReplyPlan, includeUsage: boolean): Promise<void> {
  const chunk = (
    delta: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    finish: string | null = null,
  ): Record<string, unknown> => ({
    id: plan.id,
    object: 'chat.completion.chunk',
    created: plan.created,
    model: plan.model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null, ...extra }],
  });
  const first = chunk({ role: 'assistant', content: '' }, plan.returnTokenIds ? { token_ids: [] } : {});
  if (plan.returnTokenIds) first.prompt_token_ids = plan.promptTokenIds;
  await sse.send(first);
  for (const piece of plan.pieces) {
    const extra: Record<string, unknown> = {};
    if (plan.returnTokenIds) extra.token_ids = toyTokenize(piece);
    if (plan.logprobs) extra.logprobs = { content: logprobsContent([piece]), refusal: null };
    await sse.send(chunk({ content: piece }, extra));
  }
  const legacy = plan.legacyFunctions ? plan.toolCalls[0] : undefined;
  if (legacy) await sse.send(chunk({ function_call: { name: legacy.name, arguments: legacy.arguments } }));
  for (const [index, call] of (legacy ? [] : plan.toolCalls).entries()) {
    await sse.send(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    const half = Math.ceil(call.arguments.length / 2);
    for (const part of [call.arguments.slice(0, half), call.arguments.slice(half)]) {
      if (part === '') continue;
      const extra = plan.returnTokenIds ? { token_ids: toyTokenize(part) } : {};
      await sse.send(chunk({ tool_calls: [{ index, function: { arguments: part } }] }, extra));
    }
  }
  await sse.send(chunk({}, {}, plan.finishReason));
  await endOpenAiStream(sse, plan, 'chat.completion.chunk', includeUsage);
}
