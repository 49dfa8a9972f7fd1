import { isRecord, type JsonRecord } from '@agl/core/guards';
import {
  contentText,
  isIntArray,
  type LlmMessage,
  type LlmRequest,
  type LlmResponse,
  type LlmToolCall,
  type LlmToolDefinition,
} from '@agl/core/llm-span';
import { SPAN_CHAT_COMPLETION, SPAN_COMPLETION } from '@agl/core/semconv';
import { anthropicRequestToChat, finishReasonOf } from '../translation/anthropic-translation';
import type { CallKind, CallPlan } from '../upstream/call-plan';

/**
 * The records of a call that core's span writer (`@agl/core/llm-span`) turns into the span's attributes: the request
 * as the backend saw it and its answer, read from the body of every API the gateway serves (Chat Completions, legacy
 * completions, Responses, Anthropic Messages).
 */

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const records = (v: unknown): JsonRecord[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const intList = (v: unknown): number[] | undefined => (isIntArray(v) ? v : undefined);

/** Span name of a call (Contract 2): chat-like calls are `openai.chat.completion` whatever the provider. */
export function spanNameOf(kind: CallKind): string {
  return kind === 'completion' ? SPAN_COMPLETION : SPAN_CHAT_COMPLETION;
}

/** `gen_ai.system` of a call: the API the client spoke. */
export function systemOf(kind: CallKind): string {
  return kind === 'anthropic-passthrough' || kind === 'anthropic-translate' ? 'anthropic' : 'openai';
}

/** The request of a call as the backend saw it. */
export function callRequestOf(plan: CallPlan): LlmRequest {
  const body = plan.prepared.body;
  const provider = systemOf(plan.kind);
  switch (plan.kind) {
    case 'completion':
      return completionRequest(body, provider);
    case 'responses':
      return responsesRequest(body, provider);
    case 'anthropic-passthrough':
      return chatRequest(anthropicRequestToChat(body), provider);
    default:
      return chatRequest(body, provider);
  }
}

/** A complete backend answer of a call of this kind. */
export function callResponseOf(kind: CallKind, body: JsonRecord): LlmResponse {
  switch (kind) {
    case 'completion':
      return completionResponse(body);
    case 'responses':
      return responsesResponse(body);
    case 'anthropic-passthrough':
      return anthropicResponse(body);
    default:
      return chatResponse(body);
  }
}

function toolCalls(value: unknown): LlmToolCall[] | undefined {
  const calls = records(value).map((c) => {
    const fn = isRecord(c.function) ? c.function : {};
    return { id: str(c.id), name: str(fn.name), arguments: str(fn.arguments) };
  });
  return calls.length > 0 ? calls : undefined;
}

function chatMessage(m: JsonRecord): LlmMessage {
  const message: LlmMessage = { role: str(m.role), content: contentText(m.content) };
  if (typeof m.tool_call_id === 'string') message.toolCallId = m.tool_call_id;
  if (typeof m.name === 'string') message.name = m.name;
  const calls = toolCalls(m.tool_calls);
  if (calls) message.toolCalls = calls;
  return message;
}

function chatTools(value: unknown): LlmToolDefinition[] {
  return records(value).map((t) => {
    const fn = isRecord(t.function) ? t.function : t;
    const tool: LlmToolDefinition = { name: str(fn.name) };
    if (typeof fn.description === 'string') tool.description = fn.description;
    const parameters = fn.parameters ?? fn.input_schema;
    if (parameters !== undefined) tool.parameters = parameters;
    return tool;
  });
}

/** The fields every request kind shares: model, stream flag and sampling. */
function requestOf(body: JsonRecord, provider: string, messages: LlmMessage[], tools: LlmToolDefinition[]): LlmRequest {
  return {
    provider,
    model: text(body.model),
    temperature: num(body.temperature),
    maxTokens: num(body.max_completion_tokens) ?? num(body.max_tokens) ?? num(body.max_output_tokens),
    topP: num(body.top_p),
    streaming: body.stream === true,
    messages,
    tools,
  };
}

function chatRequest(body: JsonRecord, provider: string): LlmRequest {
  return requestOf(body, provider, records(body.messages).map(chatMessage), chatTools(body.tools));
}

/** A legacy completions request: the prompt becomes one user message. */
function completionRequest(body: JsonRecord, provider: string): LlmRequest {
  return requestOf(body, provider, [{ role: 'user', content: contentText(body.prompt) }], []);
}

/** A Responses API request: instructions, input items, function tools. */
function responsesRequest(body: JsonRecord, provider: string): LlmRequest {
  const messages: LlmMessage[] = [];
  if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  for (const item of records(body.input)) {
    if (item.type === 'function_call_output')
      messages.push({ role: 'tool', content: contentText(item.output), toolCallId: str(item.call_id) });
    else if (item.type === 'function_call') {
      messages.push({
        role: 'assistant',
        content: null,
        toolCalls: [{ id: str(item.call_id), name: str(item.name), arguments: str(item.arguments) }],
      });
    } else if (typeof item.role === 'string') messages.push({ role: item.role, content: contentText(item.content) });
  }
  return requestOf(body, provider, messages, chatTools(body.tools));
}

type Usage = Pick<LlmResponse, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'>;

function usageOf(body: JsonRecord): Usage {
  const usage = isRecord(body.usage) ? body.usage : {};
  // Chat Completions: prompt_tokens_details; Responses: input_tokens_details.
  const details = isRecord(usage.prompt_tokens_details)
    ? usage.prompt_tokens_details
    : isRecord(usage.input_tokens_details)
      ? usage.input_tokens_details
      : {};
  return {
    inputTokens: num(usage.prompt_tokens) ?? num(usage.input_tokens),
    cachedInputTokens: num(details.cached_tokens),
    outputTokens: num(usage.completion_tokens) ?? num(usage.output_tokens),
  };
}

const finishOf = (c: JsonRecord): string | null => (typeof c.finish_reason === 'string' ? c.finish_reason : null);

/** A `chat.completion` body (or one assembled from chunks). */
function chatResponse(body: JsonRecord): LlmResponse {
  const choices = records(body.choices);
  const first = choices[0];
  const logprobs = first && isRecord(first.logprobs) ? first.logprobs : null;
  return {
    id: text(body.id),
    model: text(body.model),
    choices: choices.map((c) => ({
      ...chatMessage(isRecord(c.message) ? c.message : { role: 'assistant' }),
      finishReason: finishOf(c),
    })),
    ...usageOf(body),
    promptTokenIds: intList(body.prompt_token_ids) ?? intList(first?.prompt_token_ids),
    responseTokenIds: intList(first?.token_ids),
    logprobs: logprobs && Array.isArray(logprobs.content) ? logprobs.content : undefined,
  };
}

/** The legacy `{tokens, token_logprobs}` logprobs as an OpenAI chat `content` list. */
function legacyLogprobsContent(logprobs: unknown): unknown[] | undefined {
  if (!isRecord(logprobs) || !Array.isArray(logprobs.tokens) || !Array.isArray(logprobs.token_logprobs))
    return undefined;
  const tokenLogprobs = logprobs.token_logprobs;
  return logprobs.tokens.map((token, i) => ({ token, logprob: tokenLogprobs[i] ?? null, top_logprobs: [] }));
}

/** A `text_completion` body (vLLM puts token ids on each choice). */
function completionResponse(body: JsonRecord): LlmResponse {
  const choices = records(body.choices);
  const first = choices[0];
  return {
    id: text(body.id),
    model: text(body.model),
    choices: choices.map((c) => ({ role: 'assistant', content: str(c.text), finishReason: finishOf(c) })),
    ...usageOf(body),
    promptTokenIds: intList(first?.prompt_token_ids),
    responseTokenIds: intList(first?.token_ids),
    logprobs: first ? legacyLogprobsContent(first.logprobs) : undefined,
  };
}

/** A Responses API `response` object: message text and function calls become one choice. */
function responsesResponse(body: JsonRecord): LlmResponse {
  const texts: string[] = [];
  const calls: LlmToolCall[] = [];
  let logprobs: unknown[] | undefined;
  for (const item of records(body.output)) {
    if (item.type === 'message') {
      for (const part of records(item.content)) {
        if (typeof part.text === 'string') texts.push(part.text);
        if (Array.isArray(part.logprobs) && part.logprobs.length > 0)
          logprobs = [...(logprobs ?? []), ...(part.logprobs as unknown[])];
      }
    } else if (item.type === 'function_call')
      calls.push({ id: str(item.call_id), name: str(item.name), arguments: str(item.arguments) });
  }
  const status = typeof body.status === 'string' ? body.status : null;
  const message: LlmMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    finishReason: calls.length > 0 ? 'tool_calls' : status === 'completed' ? 'stop' : status,
  };
  if (calls.length > 0) message.toolCalls = calls;
  return {
    id: text(body.id),
    model: text(body.model),
    choices: [message],
    ...usageOf(body),
    promptTokenIds: intList(body.prompt_token_ids),
    responseTokenIds: intList(body.output_token_ids) ?? intList(body.token_ids),
    logprobs,
  };
}

/** An Anthropic `message` body (a passed-through call). */
function anthropicResponse(message: JsonRecord): LlmResponse {
  const blocks = records(message.content);
  const texts = blocks.filter((b) => b.type === 'text').map((b) => str(b.text));
  const calls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: str(b.id), name: str(b.name), arguments: JSON.stringify(b.input ?? {}) }));
  const choice: LlmMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    finishReason: finishReasonOf(message.stop_reason),
  };
  if (calls.length > 0) choice.toolCalls = calls;
  const usage = isRecord(message.usage) ? message.usage : {};
  // Anthropic counts cache reads and writes apart from input_tokens; the span's input tokens include them (OTel GenAI).
  const input = num(usage.input_tokens);
  const cacheRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens) ?? 0;
  return {
    id: text(message.id),
    model: text(message.model),
    choices: [choice],
    inputTokens: input === undefined ? undefined : input + (cacheRead ?? 0) + cacheWrite,
    cachedInputTokens: cacheRead,
    outputTokens: num(usage.output_tokens),
  };
}
