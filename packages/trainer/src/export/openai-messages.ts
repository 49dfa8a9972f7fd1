import type { ChatMessage, JsonValue } from '@agl/core/schema';

/** An OpenAI chat message as fine-tuning files spell it (snake_case). */
export interface OpenAiMessage {
  role: string;
  content: JsonValue;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

/** An OpenAI function tool definition. */
export interface OpenAiTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonValue };
}

/**
 * AGL's camelCase {@link ChatMessage} → OpenAI's wire message. A missing content becomes `null` for an assistant
 * message (tool-call-only turns) and `''` otherwise; unknown extra keys are dropped.
 */
export function toOpenAiMessage(message: ChatMessage): OpenAiMessage {
  const content = message.content === undefined ? (message.role === 'assistant' ? null : '') : message.content;
  const out: OpenAiMessage = { role: message.role, content };
  if (message.toolCalls && message.toolCalls.length > 0) {
    out.tool_calls = message.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  if (message.toolCallId !== undefined) out.tool_call_id = message.toolCallId;
  if (message.name !== undefined) out.name = message.name;
  return out;
}

/** Structural equality of message lists (key order as produced by {@link toOpenAiMessage}). */
export function sameMessages(a: readonly OpenAiMessage[], b: readonly OpenAiMessage[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** True when `prefix` is a (not necessarily proper) prefix of `messages`. */
export function isMessagePrefix(prefix: readonly OpenAiMessage[], messages: readonly OpenAiMessage[]): boolean {
  return prefix.length <= messages.length && sameMessages(prefix, messages.slice(0, prefix.length));
}
