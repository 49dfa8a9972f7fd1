import { randomUUID } from 'node:crypto';
import { toyChatPromptIds, toyLogprob, toyPieces, toyTokenId, toyTokenize } from './toy-tokenizer';
import type { SseWriter } from './http-io';
import type { TestLlmReply, TestLlmRequest } from './types';

/** A reply materialised for the wire: ids, token ids, argument strings. */
export interface ReplyPlan {
  id: string;
  created: number;
  model: string;
  content: string;
  /** Content split into streamable pieces (toy tokens). */
  pieces: string[];
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: 'stop' | 'length' | 'tool_calls' | 'function_call';
  /** The request offered legacy `functions` (no `tools`): the call goes out as `function_call`. */
  legacyFunctions: boolean;
  promptTokenIds: number[];
  completionTokenIds: number[];
  returnTokenIds: boolean;
  logprobs: boolean;
}

/** The OpenAI logprobs `content` list for a list of pieces. */
export function logprobsContent(
  pieces: readonly string[],
): { token: string; logprob: number; bytes: number[]; top_logprobs: unknown[] }[] {
  return pieces.map((p) => ({
    token: p,
    logprob: toyLogprob(toyTokenId(p)),
    bytes: [...Buffer.from(p, 'utf8')],
    top_logprobs: [],
  }));
}

/** Build the {@link ReplyPlan} of a scripted reply. */
export function planReply(request: TestLlmRequest, reply: TestLlmReply, idPrefix: string): ReplyPlan {
  const content = reply.content ?? '';
  const toolCalls = (reply.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 20)}${i}`,
    name: c.name,
    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
  }));
  const toolText = toolCalls.map((c) => `<tool_call>${c.name}${c.arguments}</tool_call>`).join('');
  const promptTokenIds =
    request.api === 'completion' ? toyTokenize(request.messages[0]?.content ?? '') : toyChatPromptIds(request.messages);
  const body = request.body;
  const legacyFunctions = Array.isArray(body.functions) && !Array.isArray(body.tools);
  return {
    id: `${idPrefix}${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    content,
    pieces: toyPieces(content),
    toolCalls,
    finishReason:
      reply.finishReason ?? (toolCalls.length > 0 ? (legacyFunctions ? 'function_call' : 'tool_calls') : 'stop'),
    legacyFunctions,
    promptTokenIds,
    completionTokenIds: [...toyTokenize(content), ...toyTokenize(toolText)],
    returnTokenIds: body.return_token_ids === true,
    logprobs: body.logprobs === true || (typeof body.logprobs === 'number' && request.api === 'completion'),
  };
}

/** Usage numbers of a plan in OpenAI's naming. */
export function openAiUsage(plan: ReplyPlan): {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
} {
  const p = plan.promptTokenIds.length;
  const c = plan.completionTokenIds.length;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/**
 * Ends an OpenAI stream of `object` chunks (`chat.completion.chunk`, `text_completion`): a usage chunk when the request
 * asked for one (`stream_options.include_usage`), then `[DONE]`.
 */
export async function endOpenAiStream(
  sse: SseWriter,
  plan: ReplyPlan,
  object: string,
  includeUsage: boolean,
): Promise<void> {
  if (includeUsage) {
    const { id, created, model } = plan;
    await sse.send({ id, object, created, model, choices: [], usage: openAiUsage(plan) });
  }
  await sse.send('[DONE]');
  sse.end();
}
