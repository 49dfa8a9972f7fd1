import {
  ATTR_AGENT_NAME,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAMING,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_REQUEST_TOP_P,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  ATTR_LOGPROBS_CONTENT,
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_RESPONSE_TOKEN_IDS,
  ATTR_TOOL_CALL_ID,
  ATTR_TOOL_CALL_TYPE,
  ATTR_TOOL_NAME,
  ATTR_TOOL_PARAMETERS,
  completionKey,
  completionToolCallKey,
  promptKey,
  promptToolCallKey,
  requestFunctionKey,
} from '../semconv';

/**
 * Framework-neutral shapes that adapters normalise their framework's LLM payloads into, and the writers that turn
 * them into DESIGN.md Contract 2 span attributes. Every adapter (LangChain, OpenAI Agents, Vercel AI, the plain
 * openai client) and the gateway (`@agl/gateway`, `src/recording/`) build these records and call these writers, so the
 * layout is written in exactly one place. What a Python AGL 0.3 reader and our converter expect decides each detail:
 * - a message without content and without tool calls gets `content: ''` (AGL 0.3 reads a missing content as `''`);
 * - token ids are written only as non-empty integer lists (AGL 0.3 reads a missing or empty list as "no ids");
 * - the logprobs list only when it has entries.
 */

/** One assistant tool call; `arguments` is the JSON string the model produced. */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One chat message in OpenAI shape. */
export interface LlmMessage {
  role: string;
  content?: string | null;
  toolCallId?: string;
  toolCalls?: LlmToolCall[];
  name?: string;
  /** Only on completion choices. */
  finishReason?: string | null;
}

/** One function tool offered to the model. */
export interface LlmToolDefinition {
  name: string;
  description?: string;
  parameters?: unknown;
}

/** The request side of one LLM call. */
export interface LlmRequest {
  /** Provider (`openai`, `vllm`, ...); written as `gen_ai.system`. */
  provider?: string;
  model?: string;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  streaming?: boolean;
  messages: LlmMessage[];
  tools?: LlmToolDefinition[];
}

/** The response side of one LLM call. */
export interface LlmResponse {
  id?: string;
  model?: string;
  /** Completion choices (usually one assistant message). */
  choices: LlmMessage[];
  inputTokens?: number;
  /** Input tokens served from the backend's prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cachedInputTokens?: number;
  outputTokens?: number;
  /** vLLM `prompt_token_ids`. */
  promptTokenIds?: number[];
  /** vLLM `choices[0].token_ids`. */
  responseTokenIds?: number[];
  /** The OpenAI logprobs `content` list (`[{token, logprob, ...}]`). */
  logprobs?: unknown[];
  /** The same list as JSON text, when the caller kept the backend's text unparsed (wins over `logprobs`). */
  logprobsJson?: string;
}

type AttrValue = string | number | boolean | string[] | number[];
/** Flat span attributes as written by the adapters. */
export type LlmSpanAttributes = Record<string, AttrValue>;
/** A map the writers add to: their own, or a wider one such as a store span's `Attributes`. */
type AttributeSink = Record<string, unknown>;

function put(out: AttributeSink, key: string, value: AttrValue | null | undefined): void {
  if (value !== undefined && value !== null) out[key] = value;
}

const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);

/** The text of a content part that is only text (a string, or `{text}` of an untyped or text type), else `null`. */
function partText(part: unknown): string | null {
  if (typeof part === 'string') return part;
  if (typeof part !== 'object' || part === null) return null;
  const { text, type } = part as { text?: unknown; type?: unknown };
  return typeof text === 'string' && (type === undefined || (typeof type === 'string' && TEXT_PARTS.has(type)))
    ? text
    : null;
}

/**
 * Text of a content value: strings as is, a list of text parts joined, anything else (a list with an image or any
 * other typed part) as JSON, so the converter can still find its parts.
 */
export function contentText(content: unknown): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let joined = '';
    for (const part of content) {
      const text = partText(part);
      if (text === null) return JSON.stringify(content);
      joined += text;
    }
    return joined;
  }
  return JSON.stringify(content);
}

/**
 * Contract 2 attributes of the request: model, parameters, flattened prompt and offered functions. They are added to
 * `out` (a new map by default), which is returned.
 */
export function llmRequestAttributes(request: LlmRequest): LlmSpanAttributes;
export function llmRequestAttributes<T extends AttributeSink>(request: LlmRequest, out: T): T;
export function llmRequestAttributes(request: LlmRequest, out: AttributeSink = {}): AttributeSink {
  put(out, ATTR_GEN_AI_SYSTEM, request.provider ?? 'openai');
  put(out, ATTR_GEN_AI_REQUEST_MODEL, request.model);
  put(out, ATTR_GEN_AI_REQUEST_TEMPERATURE, request.temperature);
  put(out, ATTR_GEN_AI_REQUEST_MAX_TOKENS, request.maxTokens);
  put(out, ATTR_GEN_AI_REQUEST_TOP_P, request.topP);
  put(out, ATTR_GEN_AI_REQUEST_STREAMING, request.streaming);
  request.messages.forEach((message, i) => {
    out[promptKey(i, 'role')] = message.role;
    put(out, promptKey(i, 'content'), message.content ?? (message.toolCalls?.length ? undefined : ''));
    put(out, promptKey(i, 'tool_call_id'), message.toolCallId);
    put(out, promptKey(i, 'name'), message.name);
    message.toolCalls?.forEach((call, j) => {
      out[promptToolCallKey(i, j, 'id')] = call.id;
      out[promptToolCallKey(i, j, 'name')] = call.name;
      out[promptToolCallKey(i, j, 'arguments')] = call.arguments;
    });
  });
  request.tools?.forEach((tool, k) => {
    out[requestFunctionKey(k, 'name')] = tool.name;
    put(out, requestFunctionKey(k, 'description'), tool.description);
    if (tool.parameters !== undefined) out[requestFunctionKey(k, 'parameters')] = JSON.stringify(tool.parameters);
  });
  return out;
}

/**
 * Contract 2 attributes of the response: id, model, completions, usage, token ids and logprobs. They are added to
 * `out` (a new map by default; the gateway passes the request half it built while the backend worked), which is
 * returned.
 */
export function llmResponseAttributes(response: LlmResponse): LlmSpanAttributes;
export function llmResponseAttributes<T extends AttributeSink>(response: LlmResponse, out: T): T;
export function llmResponseAttributes(response: LlmResponse, out: AttributeSink = {}): AttributeSink {
  put(out, ATTR_GEN_AI_RESPONSE_ID, response.id);
  put(out, ATTR_GEN_AI_RESPONSE_MODEL, response.model);
  const reasons = response.choices.map((c) => c.finishReason).filter((r): r is string => typeof r === 'string');
  if (reasons.length > 0) out[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = reasons;
  response.choices.forEach((choice, i) => {
    out[completionKey(i, 'role')] = choice.role;
    put(out, completionKey(i, 'content'), choice.content ?? (choice.toolCalls?.length ? undefined : ''));
    put(out, completionKey(i, 'finish_reason'), choice.finishReason);
    choice.toolCalls?.forEach((call, j) => {
      out[completionToolCallKey(i, j, 'id')] = call.id;
      out[completionToolCallKey(i, j, 'name')] = call.name;
      out[completionToolCallKey(i, j, 'arguments')] = call.arguments;
    });
  });
  put(out, ATTR_GEN_AI_USAGE_INPUT_TOKENS, response.inputTokens);
  put(out, ATTR_GEN_AI_USAGE_PROMPT_TOKENS, response.inputTokens);
  put(out, ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, response.cachedInputTokens);
  put(out, ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, response.outputTokens);
  put(out, ATTR_GEN_AI_USAGE_COMPLETION_TOKENS, response.outputTokens);
  if (isIntArray(response.promptTokenIds)) out[ATTR_PROMPT_TOKEN_IDS] = response.promptTokenIds;
  if (isIntArray(response.responseTokenIds)) out[ATTR_RESPONSE_TOKEN_IDS] = response.responseTokenIds;
  if (response.logprobsJson !== undefined) {
    if (!EMPTY_LIST.test(response.logprobsJson)) out[ATTR_LOGPROBS_CONTENT] = response.logprobsJson;
  } else if (Array.isArray(response.logprobs) && response.logprobs.length > 0) {
    out[ATTR_LOGPROBS_CONTENT] = JSON.stringify(response.logprobs);
  }
  return out;
}

const EMPTY_LIST = /^\s*\[\s*\]\s*$/;

/** A non-empty array of integers (what Contract 2 accepts as token ids). */
export function isIntArray(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => Number.isInteger(v));
}

/** Attributes of an agent span: both `agent.name` (AGL 0.3) and `gen_ai.agent.name`, so `agentMatch` finds it. */
export function agentSpanAttributes(name: string): LlmSpanAttributes {
  return { [ATTR_AGENT_NAME]: name, [ATTR_GEN_AI_AGENT_NAME]: name };
}

/** Attributes of a tool-execution span (Contract 2), plus the GenAI names. */
export function toolSpanAttributes(options: {
  name: string;
  parameters?: unknown;
  callId?: string | null;
  type?: string;
}): LlmSpanAttributes {
  const out: LlmSpanAttributes = { [ATTR_TOOL_NAME]: options.name, [ATTR_GEN_AI_TOOL_NAME]: options.name };
  if (options.parameters !== undefined) {
    out[ATTR_TOOL_PARAMETERS] =
      typeof options.parameters === 'string' ? options.parameters : JSON.stringify(options.parameters);
  }
  if (options.callId) {
    out[ATTR_TOOL_CALL_ID] = options.callId;
    out[ATTR_GEN_AI_TOOL_CALL_ID] = options.callId;
  }
  out[ATTR_TOOL_CALL_TYPE] = options.type ?? 'function';
  return out;
}
