import { isRecord, type JsonRecord } from '@agl/core/guards';

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
const records = (v: unknown): JsonRecord[] => (Array.isArray(v) ? v.filter(isRecord) : []);

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  return records(content)
    .filter((b) => b.type === 'text')
    .map((b) => str(b.text))
    .join('');
}

function imagePart(block: JsonRecord): JsonRecord | null {
  const source = isRecord(block.source) ? block.source : null;
  if (!source) return null;
  if (source.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${str(source.media_type)};base64,${str(source.data)}` } };
  if (source.type === 'url') return { type: 'image_url', image_url: { url: str(source.url) } };
  return null;
}

function userMessages(content: unknown): JsonRecord[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: JsonRecord[] = [];
  const parts: JsonRecord[] = [];
  for (const block of records(content)) {
    if (block.type === 'tool_result') {
      const text = blockText(block.content);
      out.push({
        role: 'tool',
        tool_call_id: str(block.tool_use_id),
        content: block.is_error === true && text === '' ? 'error' : text,
      });
    } else if (block.type === 'text') parts.push({ type: 'text', text: str(block.text) });
    else if (block.type === 'image') {
      const part = imagePart(block);
      if (part) parts.push(part);
    }
  }
  if (parts.length > 0) {
    const allText = parts.every((p) => p.type === 'text');
    out.push({ role: 'user', content: allText ? parts.map((p) => str(p.text)).join('') : parts });
  }
  return out;
}

function assistantMessage(content: unknown): JsonRecord {
  if (typeof content === 'string') return { role: 'assistant', content };
  const blocks = records(content);
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => str(b.text))
    .join('');
  const calls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({
      id: str(b.id),
      type: 'function',
      function: { name: str(b.name), arguments: JSON.stringify(b.input ?? {}) },
    }));
  const message: JsonRecord = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function toolChoice(choice: unknown): unknown {
  if (!isRecord(choice)) return undefined;
  if (choice.type === 'auto') return 'auto';
  if (choice.type === 'any') return 'required';
  if (choice.type === 'none') return 'none';
  if (choice.type === 'tool') return { type: 'function', function: { name: str(choice.name) } };
  return undefined;
}

/**
 * Translates an Anthropic Messages request into a chat-completions request: system prompt, text/image blocks,
 * `tool_use` → `tool_calls`, `tool_result` → `tool` messages, tools, tool choice, sampling and stop sequences.
 */
export function anthropicRequestToChat(body: JsonRecord): JsonRecord {
  const messages: JsonRecord[] = [];
  if (body.system !== undefined && body.system !== null)
    messages.push({ role: 'system', content: blockText(body.system) });
  for (const m of records(body.messages)) {
    if (m.role === 'assistant') messages.push(assistantMessage(m.content));
    else messages.push(...userMessages(m.content));
  }
  const chat: JsonRecord = { model: body.model, messages };
  if (body.max_tokens !== undefined) chat.max_tokens = body.max_tokens;
  for (const key of ['temperature', 'top_p', 'top_k', 'stream'] as const)
    if (body[key] !== undefined) chat[key] = body[key];
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) chat.stop = body.stop_sequences;
  const tools = records(body.tools).filter((t) => t.input_schema !== undefined);
  if (tools.length > 0) {
    chat.tools = tools.map((t) => ({
      type: 'function',
      function: {
        name: str(t.name),
        ...(typeof t.description === 'string' ? { description: t.description } : {}),
        parameters: t.input_schema,
      },
    }));
  }
  const choice = toolChoice(body.tool_choice);
  if (choice !== undefined) chat.tool_choice = choice;
  if (isRecord(body.tool_choice) && body.tool_choice.disable_parallel_tool_use === true)
    chat.parallel_tool_calls = false;
  if (isRecord(body.metadata) && typeof body.metadata.user_id === 'string') chat.user = body.metadata.user_id;
  return chat;
}

/** OpenAI finish reason → Anthropic stop reason. */
export function stopReasonOf(finishReason: unknown): string {
  if (finishReason === 'length') return 'max_tokens';
  if (finishReason === 'tool_calls' || finishReason === 'function_call') return 'tool_use';
  return 'end_turn';
}

/** Anthropic stop reason → OpenAI finish reason (for the span). */
export function finishReasonOf(stopReason: unknown): string | null {
  if (stopReason === 'max_tokens') return 'length';
  if (stopReason === 'tool_use') return 'tool_calls';
  if (stopReason === 'end_turn' || stopReason === 'stop_sequence') return 'stop';
  return typeof stopReason === 'string' ? stopReason : null;
}

function parseInput(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** An Anthropic message id for a chat completion id. */
export function messageIdOf(id: unknown): string {
  const text = str(id);
  return text.startsWith('msg_') ? text : `msg_${text.replace(/^chatcmpl-/, '')}`;
}

/** Translates a `chat.completion` body into an Anthropic `message` body. */
export function chatResponseToAnthropic(chat: JsonRecord, requestedModel: unknown): JsonRecord {
  const choice = records(chat.choices)[0] ?? {};
  const message = isRecord(choice.message) ? choice.message : {};
  const content: JsonRecord[] = [];
  const text = typeof message.content === 'string' ? message.content : '';
  const calls = records(message.tool_calls);
  if (text !== '' || calls.length === 0) content.push({ type: 'text', text });
  for (const call of calls) {
    const fn = isRecord(call.function) ? call.function : {};
    content.push({ type: 'tool_use', id: str(call.id), name: str(fn.name), input: parseInput(str(fn.arguments)) });
  }
  const usage = isRecord(chat.usage) ? chat.usage : {};
  return {
    id: messageIdOf(chat.id),
    type: 'message',
    role: 'assistant',
    model: typeof chat.model === 'string' ? chat.model : str(requestedModel),
    content,
    stop_reason: stopReasonOf(choice.finish_reason),
    stop_sequence: null,
    usage: {
      input_tokens: typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0,
      output_tokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0,
    },
  };
}
