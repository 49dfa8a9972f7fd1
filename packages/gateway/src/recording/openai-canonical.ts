import {
  type CanonicalMessage,
  type CanonicalRequest,
  type CanonicalResponse,
  type CanonicalTool,
  type CanonicalToolCall,
  contentToText,
  isIntArray,
} from './canonical-call';
import { isRecord, type JsonRecord } from '../routes/http-io';

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const records = (v: unknown): JsonRecord[] => (Array.isArray(v) ? v.filter(isRecord) : []);

function toolCalls(value: unknown): CanonicalToolCall[] | undefined {
  const calls = records(value).map((c) => {
    const fn = isRecord(c.function) ? c.function : {};
    return { id: str(c.id), name: str(fn.name), arguments: str(fn.arguments) };
  });
  return calls.length > 0 ? calls : undefined;
}

/** A chat-completions message in canonical form. */
export function chatMessageToCanonical(m: JsonRecord): CanonicalMessage {
  const message: CanonicalMessage = { role: str(m.role), content: contentToText(m.content) };
  if (typeof m.tool_call_id === 'string') message.toolCallId = m.tool_call_id;
  if (typeof m.name === 'string') message.name = m.name;
  const calls = toolCalls(m.tool_calls);
  if (calls) message.toolCalls = calls;
  return message;
}

function chatTools(value: unknown): CanonicalTool[] {
  return records(value).map((t) => {
    const fn = isRecord(t.function) ? t.function : t;
    const tool: CanonicalTool = { name: str(fn.name) };
    if (typeof fn.description === 'string') tool.description = fn.description;
    const parameters = fn.parameters ?? fn.input_schema;
    if (parameters !== undefined) tool.parameters = parameters;
    return tool;
  });
}

function sampling(body: JsonRecord): Pick<CanonicalRequest, 'temperature' | 'maxTokens' | 'topP'> {
  const out: Pick<CanonicalRequest, 'temperature' | 'maxTokens' | 'topP'> = {};
  const temperature = num(body.temperature);
  const maxTokens = num(body.max_completion_tokens) ?? num(body.max_tokens) ?? num(body.max_output_tokens);
  const topP = num(body.top_p);
  if (temperature !== undefined) out.temperature = temperature;
  if (maxTokens !== undefined) out.maxTokens = maxTokens;
  if (topP !== undefined) out.topP = topP;
  return out;
}

/** A chat-completions request body in canonical form. */
export function chatRequestToCanonical(body: JsonRecord): CanonicalRequest {
  return {
    model: typeof body.model === 'string' ? body.model : null,
    messages: records(body.messages).map(chatMessageToCanonical),
    tools: chatTools(body.tools),
    stream: body.stream === true,
    ...sampling(body),
  };
}

function usageOf(body: JsonRecord): Pick<CanonicalResponse, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'> {
  const usage = isRecord(body.usage) ? body.usage : {};
  const out: Pick<CanonicalResponse, 'inputTokens' | 'cachedInputTokens' | 'outputTokens'> = {};
  const input = num(usage.prompt_tokens) ?? num(usage.input_tokens);
  const output = num(usage.completion_tokens) ?? num(usage.output_tokens);
  // Chat Completions: prompt_tokens_details; Responses: input_tokens_details.
  const details = isRecord(usage.prompt_tokens_details)
    ? usage.prompt_tokens_details
    : isRecord(usage.input_tokens_details)
      ? usage.input_tokens_details
      : {};
  const cached = num(details.cached_tokens);
  if (input !== undefined) out.inputTokens = input;
  if (cached !== undefined) out.cachedInputTokens = cached;
  if (output !== undefined) out.outputTokens = output;
  return out;
}

/** A `chat.completion` body (or one assembled from chunks) in canonical form. */
export function chatResponseToCanonical(body: JsonRecord): CanonicalResponse {
  const choices = records(body.choices);
  const first = choices[0];
  const logprobs = first && isRecord(first.logprobs) ? first.logprobs : null;
  return {
    id: typeof body.id === 'string' ? body.id : null,
    model: typeof body.model === 'string' ? body.model : null,
    choices: choices.map((c) => ({
      message: chatMessageToCanonical(isRecord(c.message) ? c.message : { role: 'assistant' }),
      finishReason: typeof c.finish_reason === 'string' ? c.finish_reason : null,
    })),
    ...usageOf(body),
    promptTokenIds: isIntArray(body.prompt_token_ids)
      ? body.prompt_token_ids
      : first && isIntArray(first.prompt_token_ids)
        ? first.prompt_token_ids
        : null,
    responseTokenIds: first && isIntArray(first.token_ids) ? first.token_ids : null,
    logprobsContent: logprobs && Array.isArray(logprobs.content) ? logprobs.content : null,
  };
}

/** A legacy completions request in canonical form: the prompt becomes one user message. */
export function completionRequestToCanonical(body: JsonRecord): CanonicalRequest {
  return {
    model: typeof body.model === 'string' ? body.model : null,
    messages: [{ role: 'user', content: contentToText(body.prompt) }],
    tools: [],
    stream: body.stream === true,
    ...sampling(body),
  };
}

/** The legacy `{tokens, token_logprobs}` logprobs as an OpenAI chat `content` list. */
function legacyLogprobsContent(logprobs: unknown): unknown[] | null {
  if (!isRecord(logprobs) || !Array.isArray(logprobs.tokens) || !Array.isArray(logprobs.token_logprobs)) return null;
  const tokenLogprobs = logprobs.token_logprobs;
  return logprobs.tokens.map((token, i) => ({ token, logprob: tokenLogprobs[i] ?? null, top_logprobs: [] }));
}

/** A `text_completion` body in canonical form (vLLM puts token ids on each choice). */
export function completionResponseToCanonical(body: JsonRecord): CanonicalResponse {
  const choices = records(body.choices);
  const first = choices[0];
  return {
    id: typeof body.id === 'string' ? body.id : null,
    model: typeof body.model === 'string' ? body.model : null,
    choices: choices.map((c) => ({
      message: { role: 'assistant', content: str(c.text) },
      finishReason: typeof c.finish_reason === 'string' ? c.finish_reason : null,
    })),
    ...usageOf(body),
    promptTokenIds: first && isIntArray(first.prompt_token_ids) ? first.prompt_token_ids : null,
    responseTokenIds: first && isIntArray(first.token_ids) ? first.token_ids : null,
    logprobsContent: first ? legacyLogprobsContent(first.logprobs) : null,
  };
}

/** A Responses API request in canonical form (instructions, input items, function tools). */
export function responsesRequestToCanonical(body: JsonRecord): CanonicalRequest {
  const messages: CanonicalMessage[] = [];
  if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  for (const item of records(body.input)) {
    if (item.type === 'function_call_output')
      messages.push({ role: 'tool', content: contentToText(item.output), toolCallId: str(item.call_id) });
    else if (item.type === 'function_call') {
      messages.push({
        role: 'assistant',
        content: null,
        toolCalls: [{ id: str(item.call_id), name: str(item.name), arguments: str(item.arguments) }],
      });
    } else if (typeof item.role === 'string') messages.push({ role: item.role, content: contentToText(item.content) });
  }
  return {
    model: typeof body.model === 'string' ? body.model : null,
    messages,
    tools: chatTools(body.tools),
    stream: body.stream === true,
    ...sampling(body),
  };
}

/** A Responses API `response` object in canonical form: message text and function calls become one choice. */
export function responsesResponseToCanonical(body: JsonRecord): CanonicalResponse {
  const texts: string[] = [];
  const calls: CanonicalToolCall[] = [];
  let logprobs: unknown[] | null = null;
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
  const message: CanonicalMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (calls.length > 0) message.toolCalls = calls;
  const status = typeof body.status === 'string' ? body.status : null;
  return {
    id: typeof body.id === 'string' ? body.id : null,
    model: typeof body.model === 'string' ? body.model : null,
    choices: [{ message, finishReason: calls.length > 0 ? 'tool_calls' : status === 'completed' ? 'stop' : status }],
    ...usageOf(body),
    promptTokenIds: isIntArray(body.prompt_token_ids) ? body.prompt_token_ids : null,
    responseTokenIds: isIntArray(body.output_token_ids)
      ? body.output_token_ids
      : isIntArray(body.token_ids)
        ? body.token_ids
        : null,
    logprobsContent: logprobs,
  };
}
