import type { Attributes } from '@agl/core/schema';
import {
  ATTR_AGL_GATEWAY,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAMING,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  ATTR_LOGPROBS_CONTENT,
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_RESPONSE_TOKEN_IDS,
  completionKey,
  completionToolCallKey,
  promptKey,
  promptToolCallKey,
  requestFunctionKey,
} from '@agl/core/semconv';

/** A tool call in any API, normalised. */
export interface CanonicalToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

/** A chat message in any API, normalised to the chat-completions form. */
export interface CanonicalMessage {
  role: string;
  /** Text (parts that are all text are joined; other parts are JSON-encoded); `null` when absent. */
  content: string | null;
  toolCallId?: string;
  name?: string;
  toolCalls?: CanonicalToolCall[];
}

/** A tool definition, normalised. */
export interface CanonicalTool {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** The request side of one LLM call, as the backend saw it. */
export interface CanonicalRequest {
  model: string | null;
  messages: CanonicalMessage[];
  tools: CanonicalTool[];
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  stream: boolean;
}

/** One choice of the response. */
export interface CanonicalChoice {
  message: CanonicalMessage;
  finishReason: string | null;
}

/** The response side of one LLM call. */
export interface CanonicalResponse {
  id: string | null;
  model: string | null;
  choices: CanonicalChoice[];
  inputTokens?: number;
  /** Input tokens the backend served from its prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cachedInputTokens?: number;
  outputTokens?: number;
  /** vLLM `prompt_token_ids`, when the backend returned them. */
  promptTokenIds: number[] | null;
  /** vLLM `token_ids` of the first choice. */
  responseTokenIds: number[] | null;
  /** The OpenAI logprobs `content` list of the first choice. */
  logprobsContent: unknown[] | null;
  /** The same list as the backend's JSON text, when it was kept unparsed (wins over `logprobsContent`). */
  logprobsContentJson?: string;
}

/** Text of a message `content`: strings as-is, all-text part lists joined, anything else JSON-encoded. */
export function contentToText(content: unknown): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const part of content) {
      if (typeof part === 'string') texts.push(part);
      else if (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string') {
        const type = (part as { type?: unknown }).type;
        if (type !== undefined && type !== 'text' && type !== 'input_text' && type !== 'output_text')
          return JSON.stringify(content);
        texts.push((part as { text: string }).text);
      } else return JSON.stringify(content);
    }
    return texts.join('');
  }
  return JSON.stringify(content);
}

/** True for an array of finite integers. */
export function isIntArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isInteger(v));
}

/**
 * A call's span attributes (Contract 2) come in two halves. This is the request half (`gen_ai.system`, request
 * parameters, tools, `gen_ai.prompt.*`), known before the backend answers, so the gateway builds it meanwhile;
 * {@link addResponseAttributes} adds the rest.
 */
export function requestAttributes(request: CanonicalRequest, system: string): Attributes {
  const attrs: Attributes = {
    [ATTR_AGL_GATEWAY]: true,
    [ATTR_GEN_AI_SYSTEM]: system,
    [ATTR_GEN_AI_REQUEST_STREAMING]: request.stream,
  };
  if (request.model !== null) attrs[ATTR_GEN_AI_REQUEST_MODEL] = request.model;
  if (request.temperature !== undefined) attrs[ATTR_GEN_AI_REQUEST_TEMPERATURE] = request.temperature;
  if (request.maxTokens !== undefined) attrs[ATTR_GEN_AI_REQUEST_MAX_TOKENS] = request.maxTokens;
  if (request.topP !== undefined) attrs[ATTR_GEN_AI_REQUEST_TOP_P] = request.topP;
  request.tools.forEach((tool, k) => {
    attrs[requestFunctionKey(k, 'name')] = tool.name;
    if (tool.description !== undefined) attrs[requestFunctionKey(k, 'description')] = tool.description;
    if (tool.parameters !== undefined) attrs[requestFunctionKey(k, 'parameters')] = JSON.stringify(tool.parameters);
  });
  request.messages.forEach((message, i) => {
    attrs[promptKey(i, 'role')] = message.role;
    if (message.content !== null) attrs[promptKey(i, 'content')] = message.content;
    if (message.toolCallId !== undefined) attrs[promptKey(i, 'tool_call_id')] = message.toolCallId;
    if (message.name !== undefined) attrs[promptKey(i, 'name')] = message.name;
    message.toolCalls?.forEach((call, j) => {
      attrs[promptToolCallKey(i, j, 'id')] = call.id;
      attrs[promptToolCallKey(i, j, 'name')] = call.name;
      attrs[promptToolCallKey(i, j, 'arguments')] = call.arguments;
    });
  });
  return attrs;
}

/**
 * Adds the response half of a call's span attributes (`gen_ai.completion.*`, response, usage, token ids,
 * `logprobs.content`) to `attrs`, the map {@link requestAttributes} made for this call, and returns it.
 */
export function addResponseAttributes(attrs: Attributes, response: CanonicalResponse): Attributes {
  response.choices.forEach((choice, i) => {
    attrs[completionKey(i, 'role')] = choice.message.role;
    if (choice.message.content !== null) attrs[completionKey(i, 'content')] = choice.message.content;
    if (choice.finishReason !== null) attrs[completionKey(i, 'finish_reason')] = choice.finishReason;
    choice.message.toolCalls?.forEach((call, j) => {
      attrs[completionToolCallKey(i, j, 'id')] = call.id;
      attrs[completionToolCallKey(i, j, 'name')] = call.name;
      attrs[completionToolCallKey(i, j, 'arguments')] = call.arguments;
    });
  });
  const finishReasons = response.choices.map((c) => c.finishReason).filter((r): r is string => r !== null);
  if (finishReasons.length > 0) attrs[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = finishReasons;
  if (response.id !== null) attrs[ATTR_GEN_AI_RESPONSE_ID] = response.id;
  if (response.model !== null) attrs[ATTR_GEN_AI_RESPONSE_MODEL] = response.model;
  if (response.inputTokens !== undefined) {
    attrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = response.inputTokens;
    attrs[ATTR_GEN_AI_USAGE_PROMPT_TOKENS] = response.inputTokens;
  }
  if (response.cachedInputTokens !== undefined)
    attrs[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = response.cachedInputTokens;
  if (response.outputTokens !== undefined) {
    attrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = response.outputTokens;
    attrs[ATTR_GEN_AI_USAGE_COMPLETION_TOKENS] = response.outputTokens;
  }
  if (response.promptTokenIds !== null) attrs[ATTR_PROMPT_TOKEN_IDS] = response.promptTokenIds;
  if (response.responseTokenIds !== null) attrs[ATTR_RESPONSE_TOKEN_IDS] = response.responseTokenIds;
  if (response.logprobsContentJson !== undefined) attrs[ATTR_LOGPROBS_CONTENT] = response.logprobsContentJson;
  else if (response.logprobsContent !== null) attrs[ATTR_LOGPROBS_CONTENT] = JSON.stringify(response.logprobsContent);
  return attrs;
}
