import type { ServerResponse } from 'node:http';
import { sendJson, type SseWriter } from './http-io';
import { endOpenAiStream, openAiUsage, type ReplyPlan } from './reply-plan';
import { toyLogprob, toyTokenize } from './toy-tokenizer';

function legacyLogprobs(pieces: readonly string[]): Record<string, unknown> {
  let offset = 0;
  const offsets = pieces.map((p) => {
    const o = offset;
    offset += p.length;
    return o;
  });
  return {
    tokens: [...pieces],
    token_logprobs: pieces.map((p) => toyLogprob(toyTokenize(p)[0] ?? 0)),
    top_logprobs: null,
    text_offset: offsets,
  };
}

/** Non-streaming `text_completion` body; vLLM puts `prompt_token_ids` and `token_ids` on each choice. */
export function textCompletionBody(plan: ReplyPlan): Record<string, unknown> {
  const choice: Record<string, unknown> = {
    index: 0,
    text: plan.content,
    finish_reason: plan.finishReason === 'tool_calls' ? 'stop' : plan.finishReason,
    logprobs: plan.logprobs ? legacyLogprobs(plan.pieces) : null,
  };
  if (plan.returnTokenIds) {
    choice.prompt_token_ids = plan.promptTokenIds;
    choice.token_ids = plan.completionTokenIds;
  }
  return {
    id: plan.id,
    object: 'text_completion',
    created: plan.created,
    model: plan.model,
    choices: [choice],
    usage: openAiUsage(plan),
  };
}

export function sendTextCompletion(res: ServerResponse, plan: ReplyPlan): void {
  sendJson(res, 200, textCompletionBody(plan));
}

/** Stream text completion chunks, then `[DONE]`. */
export async function streamTextCompletion(sse: SseWriter, plan: ReplyPlan, includeUsage: boolean): Promise<void> {
  const chunk = (text: string, extra: Record<string, unknown>, finish: string | null): Record<string, unknown> => ({
    id: plan.id,
    object: 'text_completion',
    created: plan.created,
    model: plan.model,
    choices: [{ index: 0, text, finish_reason: finish, logprobs: null, ...extra }],
  });
  for (const [i, piece] of plan.pieces.entries()) {
    const extra: Record<string, unknown> = {};
    if (plan.returnTokenIds) {
      extra.token_ids = toyTokenize(piece);
      if (i === 0) extra.prompt_token_ids = plan.promptTokenIds;
    }
    if (plan.logprobs) extra.logprobs = legacyLogprobs([piece]);
    await sse.send(chunk(piece, extra, null));
  }
  await sse.send(chunk('', {}, plan.finishReason === 'tool_calls' ? 'stop' : plan.finishReason));
  await endOpenAiStream(sse, plan, 'text_completion', includeUsage);
}
