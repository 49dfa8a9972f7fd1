import { ValidationError } from '../errors/index';
import type { ChatMessage, JsonValue, Span } from '../schema/index';
import {
  ATTR_GEN_AI_COMPLETION,
  ATTR_GEN_AI_PROMPT,
  ATTR_GEN_AI_REQUEST,
  ATTR_GEN_AI_RESPONSE,
  ATTR_TOOL,
} from '../semconv';
import { normalizeLlmCall, type ToolDefinition } from './llm-call-normalizer';
import { filterAndUnflatten } from './otel-attributes';
import { isRecord } from '../guards';

/** An OpenAI chat message in wire form (snake_case), as the fine-tuning JSONL wants it. */
export interface OpenAiChatMessage {
  role: string;
  content: JsonValue;
  name?: string;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

/** One fine-tuning row: `{messages, tools}` (`tools` is `null` when the request offered none). */
export interface FineTuningRow {
  messages: OpenAiChatMessage[];
  tools: ToolDefinition[] | null;
}

function toOpenAi(message: ChatMessage): OpenAiChatMessage {
  const role = message.role;
  const out: OpenAiChatMessage = { role, content: (message.content ?? null) as JsonValue };
  if (message.name && role !== 'tool') out.name = message.name;
  if (role === 'tool') out.tool_call_id = message.toolCallId ?? '';
  if (role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
    out.content = null;
    out.tool_calls = message.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
  }
  return out;
}

function checkContainers(span: Span): void {
  const checks: Array<[string, 'list' | 'dict']> = [
    [ATTR_GEN_AI_PROMPT, 'list'],
    [ATTR_GEN_AI_COMPLETION, 'list'],
    [ATTR_GEN_AI_REQUEST, 'dict'],
    [ATTR_GEN_AI_RESPONSE, 'dict'],
  ];
  for (const [prefix, kind] of checks) {
    const value = filterAndUnflatten(span.attributes, prefix);
    if (value === undefined) continue;
    const ok = kind === 'list' ? Array.isArray(value) : isRecord(value);
    if (!ok) {
      throw new ValidationError(
        `TraceToMessages: span ${span.spanId} (${span.name}) has ${prefix}.* attributes that do not form a ${kind}; ` +
          `write them as ${kind === 'list' ? `${prefix}.{i}.role/content` : `${prefix}.<field>`}.`,
      );
    }
  }
}

/**
 * Turns LLM-call spans into OpenAI fine-tuning chat rows (AGL 0.3 `TraceToMessages`, reference §5.9), one per LLM span
 * in input order. Tool child spans (`tool.name`, `tool.parameters`, `tool.call.id`, `tool.call.type`) become the
 * assistant's `tool_calls` when the completion has none of its own; `gen_ai.request.functions.*` become `tools` with
 * JSON-parsed parameters.
 */
export class TraceToMessages {
  /** The rows, one per LLM-call span. */
  adapt(spans: readonly Span[]): FineTuningRow[] {
    const children = new Map<string, Span[]>();
    for (const span of spans) {
      if (!span.parentId) continue;
      const list = children.get(span.parentId);
      if (list) list.push(span);
      else children.set(span.parentId, [span]);
    }
    const rows: FineTuningRow[] = [];
    for (const span of spans) {
      checkContainers(span);
      const call = normalizeLlmCall(span.attributes);
      if (!call) continue;
      const toolSpans = (children.get(span.spanId) ?? [])
        .map((child) => filterAndUnflatten(child.attributes, ATTR_TOOL))
        .filter((t): t is Record<string, unknown> => isRecord(t) && Object.keys(t).length > 0);
      const messages = call.messages.map(toOpenAi);
      for (const choice of call.choices) {
        if (choice.role !== 'assistant') continue;
        const out = toOpenAi(choice);
        if (!out.tool_calls && toolSpans.length > 0) {
          out.tool_calls = toolSpans.map((tool) => {
            const callInfo = isRecord(tool.call) ? tool.call : {};
            const params = tool.parameters;
            return {
              id: typeof callInfo.id === 'string' ? callInfo.id : '',
              type: 'function',
              function: {
                name: typeof tool.name === 'string' ? tool.name : '',
                arguments: typeof params === 'string' ? params : JSON.stringify(params ?? {}),
              },
            };
          });
        }
        messages.push(out);
      }
      rows.push({ messages, tools: call.tools });
    }
    return rows;
  }

  /** The rows as JSONL text (OpenAI fine-tuning format; `tools` omitted when null). */
  toJsonl(spans: readonly Span[]): string {
    return this.adapt(spans)
      .map((row) => JSON.stringify(row.tools ? row : { messages: row.messages }))
      .map((line) => `${line}\n`)
      .join('');
  }
}
