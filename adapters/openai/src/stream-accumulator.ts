import type { LlmResponse, LlmToolCall } from '@agl/core/tracer';
import { fromOpenAiResponsesResponse } from '@agl/core/tracer';
import { isRecord } from '@agl/core/guards';

type Obj = Record<string, unknown>;

/**
 * Folds streamed `chat.completion.chunk`s (vLLM extras and legacy `function_call` deltas included) into one normalised
 * response.
 */
export class ChatChunkAccumulator {
  #id: string | undefined;
  #model: string | undefined;
  #content = '';
  #finish: string | null = null;
  #calls: LlmToolCall[] = [];
  #usage: Obj | undefined;
  #promptTokenIds: number[] | undefined;
  #tokenIds: number[] = [];
  #logprobs: unknown[] = [];

  add(chunk: unknown): void {
    if (!isRecord(chunk)) return;
    if (typeof chunk.id === 'string') this.#id = chunk.id;
    if (typeof chunk.model === 'string') this.#model = chunk.model;
    if (isRecord(chunk.usage)) this.#usage = chunk.usage;
    if (Array.isArray(chunk.prompt_token_ids)) this.#promptTokenIds = chunk.prompt_token_ids as number[];
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find(isRecord) : undefined;
    if (!choice) return;
    if (Array.isArray(choice.token_ids)) this.#tokenIds.push(...(choice.token_ids as number[]));
    if (isRecord(choice.logprobs) && Array.isArray(choice.logprobs.content))
      this.#logprobs.push(...choice.logprobs.content);
    if (typeof choice.finish_reason === 'string') this.#finish = choice.finish_reason;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string') this.#content += delta.content;
    if (isRecord(delta.function_call)) {
      // legacy `functions` API: one call, streamed as name and argument pieces, without an id
      const call = (this.#calls[0] ??= { id: '', name: '', arguments: '' });
      if (typeof delta.function_call.name === 'string') call.name += delta.function_call.name;
      if (typeof delta.function_call.arguments === 'string') call.arguments += delta.function_call.arguments;
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const part of delta.tool_calls.filter(isRecord)) {
        const index = typeof part.index === 'number' ? part.index : this.#calls.length;
        const call = (this.#calls[index] ??= { id: '', name: '', arguments: '' });
        const fn = isRecord(part.function) ? part.function : {};
        if (typeof part.id === 'string') call.id = part.id;
        if (typeof fn.name === 'string') call.name += fn.name;
        if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
      }
    }
  }

  result(): LlmResponse {
    const calls = this.#calls.filter(Boolean);
    return {
      id: this.#id,
      model: this.#model,
      choices: [
        {
          role: 'assistant',
          content: this.#content === '' && calls.length > 0 ? null : this.#content,
          ...(calls.length > 0 ? { toolCalls: calls } : {}),
          finishReason: this.#finish,
        },
      ],
      inputTokens: typeof this.#usage?.prompt_tokens === 'number' ? this.#usage.prompt_tokens : undefined,
      outputTokens: typeof this.#usage?.completion_tokens === 'number' ? this.#usage.completion_tokens : undefined,
      promptTokenIds: this.#promptTokenIds,
      responseTokenIds: this.#tokenIds.length > 0 ? this.#tokenIds : undefined,
      logprobs: this.#logprobs.length > 0 ? this.#logprobs : undefined,
    };
  }
}

/** Keeps the final `response` object of a Responses API event stream. */
export class ResponsesEventAccumulator {
  #final: unknown;

  add(event: unknown): void {
    if (isRecord(event) && (event.type === 'response.completed' || event.type === 'response.incomplete'))
      this.#final = event.response;
  }

  result(): LlmResponse {
    return fromOpenAiResponsesResponse(this.#final);
  }
}
