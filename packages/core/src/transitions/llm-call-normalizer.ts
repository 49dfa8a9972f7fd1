import type { ChatMessage, JsonValue, TokenLogprob } from '../schema/index';
import {
  ATTR_GEN_AI_COMPLETION,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROMPT,
  ATTR_GEN_AI_REQUEST,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_DEFINITIONS,
  ATTR_GEN_AI_USAGE_COMPLETION_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_PROMPT_TOKENS,
  ATTR_LLM_INPUT_MESSAGES,
  ATTR_LLM_INVOCATION_PARAMETERS,
  ATTR_LLM_MODEL_NAME,
  ATTR_LLM_OUTPUT_MESSAGES,
  ATTR_LLM_TOKEN_COUNT_COMPLETION,
  ATTR_LLM_TOKEN_COUNT_PROMPT,
  ATTR_LLM_TOOLS,
  ATTR_LOGPROBS_CONTENT,
  ATTR_OPERATION_INPUT,
  ATTR_OPERATION_OUTPUT,
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_RESPONSE_TOKEN_IDS,
} from '../semconv';
import { isRecord } from '../guards';
import { filterAndUnflatten, hasPrefix } from './otel-attributes';

/** Which attribute family an LLM call was recorded in. */
export type LlmCallFormat = 'agl' | 'genai' | 'openinference' | 'operation';

/** An OpenAI-style tool definition. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: JsonValue };
}

/** One LLM call, whatever the attribute family it was recorded in. */
export interface NormalizedLlmCall {
  format: LlmCallFormat;
  /** Prompt messages. */
  messages: ChatMessage[];
  /** Response messages (choices); the first is the action. */
  choices: ChatMessage[];
  /** Request parameters (model, temperature, ...), without the messages. */
  request: Record<string, unknown>;
  /** Response metadata (id, model, ...), without the choices and token ids. */
  response: Record<string, unknown>;
  /** Provider response id. */
  responseId: string | null;
  model: string | null;
  /** Tools offered to the model, or `null`. */
  tools: ToolDefinition[] | null;
  promptTokenIds: number[] | null;
  responseTokenIds: number[] | null;
  logprobs: TokenLogprob[] | null;
  /** Image URLs of the prompt, in order. */
  imageUrls: string[];
  usage: { inputTokens: number | null; outputTokens: number | null };
}

type Attrs = Readonly<Record<string, unknown>>;
type Rec = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : null;

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

/** A list, or a dict with numeric keys sorted numerically; a dict without numeric keys is one entry. */
export function asMessageList(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (isRecord(value)) {
    const keys = Object.keys(value);
    const numeric = keys.filter((k) => /^\d+$/.test(k));
    if (numeric.length > 0) return numeric.sort((a, b) => Number(a) - Number(b)).map((k) => value[k]);
    return [value];
  }
  return [];
}

function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value) ?? 'null') as JsonValue;
}

/** Content as recorded: a string that holds a list of typed parts (multimodal) becomes that list. */
function normalizeContent(content: unknown): JsonValue {
  if (typeof content === 'string') {
    const trimmed = content.trimStart();
    if (trimmed.startsWith('[')) {
      const parsed = parseJson(content);
      if (
        Array.isArray(parsed) &&
        parsed.length > 0 &&
        parsed.every((p) => isRecord(p) && typeof p.type === 'string')
      ) {
        return parsed as JsonValue;
      }
    }
    return content;
  }
  if (content === undefined) return null;
  if (isRecord(content) && Object.keys(content).every((k) => /^\d+$/.test(k))) return toJson(asMessageList(content));
  return toJson(content);
}

function argumentsString(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value ?? {});
}

/** Tool calls in any of the OpenAI / flattened AGL / OpenInference (`tool_call` wrapped) forms. */
function toolCallsOf(raw: unknown): NonNullable<ChatMessage['toolCalls']> {
  return asMessageList(raw)
    .filter(isRecord)
    .map((entry) => {
      const call = isRecord(entry.tool_call) ? entry.tool_call : entry;
      const fn = isRecord(call.function) ? call.function : {};
      return {
        id: str(call.id) ?? '',
        name: str(call.name) ?? str(fn.name) ?? '',
        arguments: argumentsString(call.arguments ?? fn.arguments),
      };
    });
}

/** An OpenAI-style message (AGL flattened or operation form) as a `ChatMessage`. */
export function chatMessageFromOpenAi(raw: unknown, defaultRole = 'user'): ChatMessage | null {
  if (!isRecord(raw)) return null;
  const inner = isRecord(raw.message) ? raw.message : raw;
  const message: ChatMessage = { role: str(inner.role) ?? defaultRole, content: normalizeContent(inner.content) };
  // A legacy `function_call` (`functions` API, or OpenLLMetry's `…function_call.name|arguments`) is one call without id.
  const toolCalls = toolCallsOf(
    inner.tool_calls ?? (isRecord(inner.function_call) ? [inner.function_call] : undefined),
  );
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  const toolCallId = str(inner.tool_call_id);
  if (toolCallId) message.toolCallId = toolCallId;
  const name = str(inner.name);
  if (name) message.name = name;
  const finish = str(inner.finish_reason) ?? str(raw.finish_reason);
  if (finish) (message as Rec).finishReason = finish;
  return message;
}

// ---------------------------------------------------------------------------------------------------------------------
// GenAI semconv JSON messages
// ---------------------------------------------------------------------------------------------------------------------

function genAiMessages(raw: unknown): ChatMessage[] {
  const list = parseJson(raw);
  if (!Array.isArray(list)) return [];
  const out: ChatMessage[] = [];
  for (const entry of list) {
    if (!isRecord(entry)) continue;
    const role = str(entry.role) ?? 'user';
    const parts = Array.isArray(entry.parts) ? entry.parts.filter(isRecord) : [];
    const texts: string[] = [];
    const media: JsonValue[] = [];
    const toolCalls: NonNullable<ChatMessage['toolCalls']> = [];
    for (const part of parts) {
      const type = str(part.type);
      if (type === 'text') texts.push(str(part.content) ?? '');
      else if (type === 'tool_call') {
        toolCalls.push({
          id: str(part.id) ?? '',
          name: str(part.name) ?? '',
          arguments: argumentsString(part.arguments),
        });
      } else if (type === 'tool_call_response') {
        const response = part.response ?? part.result;
        out.push({
          role: 'tool',
          content: typeof response === 'string' ? response : JSON.stringify(response ?? null),
          toolCallId: str(part.id) ?? '',
        });
      } else if ((type === 'uri' || type === 'image' || type === 'image_url') && (str(part.uri) ?? str(part.url))) {
        media.push({ type: 'image_url', image_url: { url: (str(part.uri) ?? str(part.url)) as string } });
      }
    }
    if (
      texts.length === 0 &&
      toolCalls.length === 0 &&
      media.length === 0 &&
      parts.some((p) => p.type === 'tool_call_response')
    ) {
      continue;
    }
    const content: JsonValue =
      media.length > 0
        ? [...texts.map((t) => ({ type: 'text', text: t })), ...media]
        : texts.length > 0
          ? texts.join('')
          : toolCalls.length > 0
            ? null
            : typeof entry.content === 'string'
              ? entry.content
              : '';
    const message: ChatMessage = { role, content };
    if (toolCalls.length > 0) message.toolCalls = toolCalls;
    const name = str(entry.name);
    if (name) message.name = name;
    const finish = str(entry.finish_reason);
    if (finish) (message as Rec).finishReason = finish;
    out.push(message);
  }
  return out;
}

function genAiSystem(raw: unknown): ChatMessage[] {
  const parsed = parseJson(raw);
  if (typeof parsed === 'string') return [{ role: 'system', content: parsed }];
  if (!Array.isArray(parsed)) return [];
  const text = parsed
    .filter(isRecord)
    .map((p) => str(p.content) ?? '')
    .join('');
  return text ? [{ role: 'system', content: text }] : [];
}

// ---------------------------------------------------------------------------------------------------------------------
// OpenInference
// ---------------------------------------------------------------------------------------------------------------------

function openInferenceMessages(raw: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const entry of asMessageList(raw)) {
    if (!isRecord(entry)) continue;
    const m = isRecord(entry.message) ? entry.message : entry;
    let content: JsonValue = str(m.content) ?? null;
    const parts = asMessageList(m.contents)
      .filter(isRecord)
      .map((p) => (isRecord(p.message_content) ? p.message_content : p));
    if (content === null && parts.length > 0) {
      const converted: JsonValue[] = parts.map((p): JsonValue => {
        const image = isRecord(p.image) ? (isRecord(p.image.image) ? p.image.image : p.image) : null;
        if (p.type === 'image' && image && str(image.url))
          return { type: 'image_url', image_url: { url: str(image.url) as string } };
        return { type: 'text', text: str(p.text) ?? '' };
      });
      content = converted.every((c) => isRecord(c) && c.type === 'text')
        ? converted.map((c) => (c as { text: string }).text).join('')
        : converted;
    }
    const message: ChatMessage = { role: str(m.role) ?? 'user', content };
    const toolCalls = toolCallsOf(m.tool_calls);
    if (toolCalls.length > 0) message.toolCalls = toolCalls;
    const toolCallId = str(m.tool_call_id);
    if (toolCallId) message.toolCallId = toolCallId;
    const name = str(m.name);
    if (name) message.name = name;
    out.push(message);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// Token ids, logprobs, tools, images
// ---------------------------------------------------------------------------------------------------------------------

/** An int list (or a JSON / Python-literal string of one), else `null`. */
export function asTokenIds(value: unknown): number[] | null {
  let v = value;
  if (typeof v === 'string') v = parseJson(v.replace(/\(/g, '[').replace(/\)/g, ']'));
  if (!Array.isArray(v)) return null;
  return v.every((x) => typeof x === 'number' && Number.isInteger(x)) ? (v as number[]) : null;
}

function firstTokenIds(attrs: Attrs, keys: string[]): number[] | null {
  for (const key of keys) {
    const direct = attrs[key];
    const value = direct !== undefined ? direct : filterAndUnflatten(attrs, key);
    const ids = asTokenIds(value);
    if (ids) return ids;
  }
  return null;
}

function logprobsOf(attrs: Attrs): TokenLogprob[] | null {
  const raw = attrs[ATTR_LOGPROBS_CONTENT];
  if (typeof raw !== 'string') return null;
  const parsed = parseJson(raw);
  if (!Array.isArray(parsed)) return null;
  return parsed.filter(isRecord).map((e) => ({ token: str(e.token) ?? '', logprob: num(e.logprob) ?? 0 }));
}

/** The tool definitions of a list (entries that name no function are skipped), or `null` when none. */
function toolDefinitions(list: readonly unknown[]): ToolDefinition[] | null {
  const defs = list.map(toolDefinition).filter((t): t is ToolDefinition => t !== null);
  return defs.length > 0 ? defs : null;
}

function toolDefinition(raw: unknown): ToolDefinition | null {
  const v = parseJson(raw);
  if (!isRecord(v)) return null;
  const fn = isRecord(v.function) ? v.function : v;
  const name = str(fn.name);
  if (!name) return null;
  const params = typeof fn.parameters === 'string' ? (parseJson(fn.parameters) ?? fn.parameters) : fn.parameters;
  return {
    type: 'function',
    function: {
      name,
      description: str(fn.description) ?? '',
      parameters: toJson(params ?? { type: 'object', properties: {} }),
    },
  };
}

/** Image URLs of the prompt messages, in order (`image_url` parts; JSON-string contents parsed). */
export function imageUrlsOf(messages: readonly ChatMessage[]): string[] {
  const urls: string[] = [];
  for (const message of messages) {
    const content = message.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (!isRecord(part) || part.type !== 'image_url') continue;
      const url = isRecord(part.image_url) ? str(part.image_url.url) : str(part.image_url);
      if (url) urls.push(url);
    }
  }
  return urls;
}

// ---------------------------------------------------------------------------------------------------------------------
// The normaliser
// ---------------------------------------------------------------------------------------------------------------------

/** Which family the attributes hold an LLM call in, or `null`. */
export function detectLlmCallFormat(attrs: Attrs): LlmCallFormat | null {
  if (hasPrefix(attrs, ATTR_GEN_AI_PROMPT) || hasPrefix(attrs, ATTR_GEN_AI_COMPLETION)) return 'agl';
  if (attrs[ATTR_GEN_AI_INPUT_MESSAGES] !== undefined || attrs[ATTR_GEN_AI_OUTPUT_MESSAGES] !== undefined)
    return 'genai';
  if (hasPrefix(attrs, ATTR_LLM_INPUT_MESSAGES) || hasPrefix(attrs, ATTR_LLM_OUTPUT_MESSAGES)) return 'openinference';
  if (hasPrefix(attrs, `${ATTR_OPERATION_INPUT}.messages`) || hasPrefix(attrs, `${ATTR_OPERATION_OUTPUT}.choices`)) {
    return 'operation';
  }
  return null;
}

function without(value: unknown, keys: string[]): Record<string, unknown> {
  if (!isRecord(value)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/**
 * Reads one LLM call from span attributes in any supported family — Contract 2 / AGL 0.3 flattened `gen_ai.prompt.*`,
 * GenAI semconv JSON messages, OpenInference `llm.*_messages`, or AGL `agentlightning.operation.*` — into one record.
 * Returns `null` when the attributes hold no LLM call. Adapters for other frameworks reuse this.
 */
export function normalizeLlmCall(attrs: Attrs): NormalizedLlmCall | null {
  const format = detectLlmCallFormat(attrs);
  if (!format) return null;
  let messages: ChatMessage[] = [];
  let choices: ChatMessage[] = [];
  let request: Record<string, unknown> = {};
  let response: Record<string, unknown> = {};
  let tools: ToolDefinition[] | null = null;
  let model: string | null = null;
  const fromList = (raw: unknown, role: string): ChatMessage[] =>
    asMessageList(raw)
      .map((m) => chatMessageFromOpenAi(m, role))
      .filter((m): m is ChatMessage => m !== null);

  if (format === 'agl' || format === 'genai') {
    request = without(filterAndUnflatten(attrs, ATTR_GEN_AI_REQUEST), ['messages']);
    response = without(filterAndUnflatten(attrs, ATTR_GEN_AI_RESPONSE), [
      'choices',
      'prompt_token_ids',
      'response_token_ids',
    ]);
    model = str(attrs[ATTR_GEN_AI_REQUEST_MODEL]) ?? str(response.model);
  }
  if (format === 'agl') {
    messages = fromList(filterAndUnflatten(attrs, ATTR_GEN_AI_PROMPT), 'user');
    choices = fromList(filterAndUnflatten(attrs, ATTR_GEN_AI_COMPLETION), 'assistant');
    tools = toolDefinitions(asMessageList(request.functions));
  } else if (format === 'genai') {
    messages = [
      ...genAiSystem(attrs[ATTR_GEN_AI_SYSTEM_INSTRUCTIONS]),
      ...genAiMessages(attrs[ATTR_GEN_AI_INPUT_MESSAGES]),
    ];
    choices = genAiMessages(attrs[ATTR_GEN_AI_OUTPUT_MESSAGES]).map((m) => ({ ...m, role: m.role || 'assistant' }));
    const defs = parseJson(attrs[ATTR_GEN_AI_TOOL_DEFINITIONS]);
    if (Array.isArray(defs)) tools = toolDefinitions(defs);
  } else if (format === 'openinference') {
    messages = openInferenceMessages(filterAndUnflatten(attrs, ATTR_LLM_INPUT_MESSAGES));
    choices = openInferenceMessages(filterAndUnflatten(attrs, ATTR_LLM_OUTPUT_MESSAGES)).map((m) => ({
      ...m,
      role: m.role === 'user' ? 'assistant' : m.role,
    }));
    model = str(attrs[ATTR_LLM_MODEL_NAME]);
    const params = parseJson(attrs[ATTR_LLM_INVOCATION_PARAMETERS]);
    request = isRecord(params) ? { ...params } : {};
    if (model) request.model = model;
    response = without(filterAndUnflatten(attrs, ATTR_GEN_AI_RESPONSE), ['choices']);
    tools = toolDefinitions(
      asMessageList(filterAndUnflatten(attrs, ATTR_LLM_TOOLS)).map((t) =>
        isRecord(t) && isRecord(t.tool) ? t.tool.json_schema : t,
      ),
    );
  } else {
    const input = filterAndUnflatten(attrs, ATTR_OPERATION_INPUT);
    const output = filterAndUnflatten(attrs, ATTR_OPERATION_OUTPUT);
    request = without(input, ['messages']);
    response = without(output, ['choices', 'prompt_token_ids', 'response_token_ids']);
    messages = fromList(isRecord(input) ? input.messages : undefined, 'user');
    choices = fromList(isRecord(output) ? output.choices : undefined, 'assistant');
    model = str(request.model) ?? str(response.model);
    tools = toolDefinitions(asMessageList(request.tools ?? request.functions));
  }

  const responseId =
    str(attrs[ATTR_GEN_AI_RESPONSE_ID]) ?? str(attrs[`${ATTR_OPERATION_OUTPUT}.id`]) ?? str(response.id) ?? null;
  const promptTokenIds = firstTokenIds(attrs, [ATTR_PROMPT_TOKEN_IDS, `${ATTR_OPERATION_OUTPUT}.prompt_token_ids`]);
  const responseTokenIds = firstTokenIds(attrs, [
    ATTR_RESPONSE_TOKEN_IDS,
    `${ATTR_OPERATION_OUTPUT}.response_token_ids.0`,
    `${ATTR_OPERATION_OUTPUT}.choices.0.token_ids`,
    `${ATTR_OPERATION_OUTPUT}.choices.0.provider_specific_fields.token_ids`,
  ]);
  return {
    format,
    messages,
    choices,
    request,
    response,
    responseId,
    model,
    tools,
    promptTokenIds,
    responseTokenIds,
    logprobs: logprobsOf(attrs),
    imageUrls: imageUrlsOf(messages),
    usage: {
      inputTokens:
        num(attrs[ATTR_GEN_AI_USAGE_INPUT_TOKENS]) ??
        num(attrs[ATTR_GEN_AI_USAGE_PROMPT_TOKENS]) ??
        num(attrs[ATTR_LLM_TOKEN_COUNT_PROMPT]),
      outputTokens:
        num(attrs[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]) ??
        num(attrs[ATTR_GEN_AI_USAGE_COMPLETION_TOKENS]) ??
        num(attrs[ATTR_LLM_TOKEN_COUNT_COMPLETION]),
    },
  };
}
