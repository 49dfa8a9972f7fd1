import {
  contentText,
  type LlmMessage,
  type LlmRequest,
  type LlmResponse,
  type LlmToolCall,
  type LlmToolDefinition,
} from './llm-span';
import { isRecord } from '../guards';

/**
 * Normalisers from the OpenAI wire shapes (Chat Completions and Responses API, including vLLM's `prompt_token_ids` /
 * `token_ids` extras) to the neutral `LlmRequest` / `LlmResponse`. Several adapters meet these shapes: the plain
 * openai client, the OpenAI Agents SDK's generation/response spans and the Vercel AI SDK's raw `response.body`.
 */

type Obj = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const args = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? {}));

function chatToolCalls(value: unknown): LlmToolCall[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.filter(isRecord).map((call) => {
    const fn = isRecord(call.function) ? call.function : call;
    return { id: str(call.id) ?? '', name: str(fn.name) ?? '', arguments: args(fn.arguments) };
  });
}

/**
 * A legacy `function_call` ({ name, arguments }, the `functions` API before tools) as a tool call. It has no id: the
 * `function` message that answers it names the function instead.
 */
function legacyFunctionCall(value: unknown): LlmToolCall[] | undefined {
  if (!isRecord(value) || str(value.name) === undefined) return undefined;
  return [{ id: '', name: str(value.name) ?? '', arguments: args(value.arguments) }];
}

/** One Chat Completions message (request or response side); a legacy `function_call` counts as a tool call. */
export function fromOpenAiChatMessage(message: Obj): LlmMessage {
  const out: LlmMessage = { role: str(message.role) ?? 'user', content: contentText(message.content) };
  const calls = chatToolCalls(message.tool_calls) ?? legacyFunctionCall(message.function_call);
  if (calls) out.toolCalls = calls;
  const toolCallId = str(message.tool_call_id);
  if (toolCallId) out.toolCallId = toolCallId;
  const name = str(message.name);
  if (name) out.name = name;
  return out;
}

function chatTools(value: unknown): LlmToolDefinition[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.filter(isRecord).map((tool) => {
    const fn = isRecord(tool.function) ? tool.function : tool;
    const def: LlmToolDefinition = { name: str(fn.name) ?? '' };
    if (str(fn.description)) def.description = str(fn.description);
    if (fn.parameters !== undefined) def.parameters = fn.parameters;
    return def;
  });
}

/** A Chat Completions request body; legacy `functions` are read as the offered tools when there are no `tools`. */
export function fromOpenAiChatRequest(body: unknown, provider?: string): LlmRequest {
  const b = isRecord(body) ? body : {};
  const messages = Array.isArray(b.messages) ? b.messages.filter(isRecord).map(fromOpenAiChatMessage) : [];
  return {
    provider,
    model: str(b.model),
    temperature: num(b.temperature),
    maxTokens: num(b.max_completion_tokens) ?? num(b.max_tokens),
    topP: num(b.top_p),
    streaming: typeof b.stream === 'boolean' ? b.stream : undefined,
    messages,
    tools: chatTools(b.tools) ?? chatTools(b.functions),
  };
}

/** A Chat Completions response body (vLLM extras included). */
export function fromOpenAiChatResponse(body: unknown): LlmResponse {
  const b = isRecord(body) ? body : {};
  const choices = Array.isArray(b.choices) ? b.choices.filter(isRecord) : [];
  const usage = isRecord(b.usage) ? b.usage : {};
  const first = choices[0];
  const logprobs =
    first && isRecord(first.logprobs) && Array.isArray(first.logprobs.content) ? first.logprobs.content : undefined;
  const tokenIds =
    first?.token_ids ??
    (isRecord(first?.provider_specific_fields) ? first.provider_specific_fields.token_ids : undefined);
  return {
    id: str(b.id),
    model: str(b.model),
    choices: choices.map((choice) => ({
      ...fromOpenAiChatMessage(isRecord(choice.message) ? choice.message : { role: 'assistant' }),
      finishReason: str(choice.finish_reason) ?? null,
    })),
    inputTokens: num(usage.prompt_tokens),
    outputTokens: num(usage.completion_tokens),
    promptTokenIds: Array.isArray(b.prompt_token_ids) ? (b.prompt_token_ids as number[]) : undefined,
    responseTokenIds: Array.isArray(tokenIds) ? (tokenIds as number[]) : undefined,
    logprobs,
  };
}

function responsesText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return contentText(
      content.map((p) => (isRecord(p) && 'text' in p ? p.text : isRecord(p) && 'refusal' in p ? p.refusal : p)),
    );
  return contentText(content);
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (isRecord(output) && typeof output.text === 'string') return output.text;
  return responsesText(output) ?? '';
}

/**
 * Responses API input items (snake_case wire form, or the OpenAI Agents SDK's camelCase items) as chat messages.
 * Consecutive function calls merge into one assistant message, as Chat Completions would carry them.
 */
export function fromResponsesItems(items: unknown, instructions?: string): LlmMessage[] {
  const messages: LlmMessage[] = [];
  if (instructions) messages.push({ role: 'system', content: instructions });
  if (typeof items === 'string') return [...messages, { role: 'user', content: items }];
  if (!Array.isArray(items)) return messages;
  for (const item of items.filter(isRecord)) {
    const type = str(item.type) ?? 'message';
    if (type === 'function_call') {
      const call = {
        id: str(item.call_id) ?? str(item.callId) ?? '',
        name: str(item.name) ?? '',
        arguments: args(item.arguments),
      };
      const last = messages[messages.length - 1];
      if (last && last.role === 'assistant' && last.toolCalls && !last.content) last.toolCalls.push(call);
      else messages.push({ role: 'assistant', content: null, toolCalls: [call] });
    } else if (type === 'function_call_output' || type === 'function_call_result') {
      messages.push({
        role: 'tool',
        content: outputText(item.output),
        toolCallId: str(item.call_id) ?? str(item.callId) ?? '',
      });
    } else if (type === 'message') {
      const role = str(item.role) ?? 'user';
      messages.push({ role: role === 'developer' ? 'system' : role, content: responsesText(item.content) });
    }
  }
  return messages;
}

function responsesTools(value: unknown): LlmToolDefinition[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const fns = value.filter((t) => isRecord(t) && (t.type === 'function' || t.type === undefined));
  return chatTools(fns);
}

/** A Responses API request body. */
export function fromOpenAiResponsesRequest(body: unknown, provider?: string): LlmRequest {
  const b = isRecord(body) ? body : {};
  return {
    provider,
    model: str(b.model),
    temperature: num(b.temperature),
    maxTokens: num(b.max_output_tokens),
    topP: num(b.top_p),
    streaming: typeof b.stream === 'boolean' ? b.stream : undefined,
    messages: fromResponsesItems(b.input, str(b.instructions)),
    tools: responsesTools(b.tools),
  };
}

/** A Responses API response object (vLLM extras included when present). */
export function fromOpenAiResponsesResponse(body: unknown): LlmResponse {
  const b = isRecord(body) ? body : {};
  const output = Array.isArray(b.output) ? b.output.filter(isRecord) : [];
  const usage = isRecord(b.usage) ? b.usage : {};
  const message: LlmMessage = { role: 'assistant', content: null };
  const texts: string[] = [];
  const logprobs: unknown[] = [];
  for (const item of output) {
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content.filter(isRecord)) {
        if (typeof part.text === 'string') texts.push(part.text);
        if (Array.isArray(part.logprobs)) logprobs.push(...part.logprobs);
      }
    } else if (item.type === 'function_call') {
      (message.toolCalls ??= []).push({
        id: str(item.call_id) ?? str(item.callId) ?? '',
        name: str(item.name) ?? '',
        arguments: args(item.arguments),
      });
    }
  }
  if (texts.length > 0) message.content = texts.join('');
  message.finishReason = message.toolCalls ? 'tool_calls' : str(b.status) === 'incomplete' ? 'length' : 'stop';
  return {
    id: str(b.id),
    model: str(b.model),
    choices: [message],
    inputTokens: num(usage.input_tokens),
    outputTokens: num(usage.output_tokens),
    promptTokenIds: Array.isArray(b.prompt_token_ids) ? (b.prompt_token_ids as number[]) : undefined,
    responseTokenIds: Array.isArray(b.output_token_ids)
      ? (b.output_token_ids as number[])
      : Array.isArray(b.token_ids)
        ? (b.token_ids as number[])
        : undefined,
    logprobs: logprobs.length > 0 ? logprobs : undefined,
  };
}
