import type { Span } from '../schema/index';
import {
  ATTR_AGENT_NAME,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_COMPLETION,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROMPT,
  EVENT_GEN_AI_CHOICE,
  EVENT_GEN_AI_CONTENT_COMPLETION,
  EVENT_GEN_AI_CONTENT_PROMPT,
  GEN_AI_OPERATION_CREATE_AGENT,
  GEN_AI_OPERATION_INVOKE_AGENT,
} from '../semconv';
import { detectLlmCallFormat } from './llm-call-normalizer';
import { unflattenAttributes } from './otel-attributes';
import { isRecord } from '../guards';

/**
 * A read-time rewrite of one span (pure: returns a new span or the same one). Framework presets use mappers to bring
 * spans sent over OTLP onto the forms `TraceToTransitions` reads, without changing what the store keeps.
 */
export type SpanMapper = (span: Span) => Span;

type Rec = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function parseJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** A list, or a dict with numeric keys in order; anything else is empty. */
function listOf(value: unknown): unknown[] {
  const v = parseJson(value);
  if (Array.isArray(v)) return v;
  if (isRecord(v)) {
    const keys = Object.keys(v).filter((k) => /^\d+$/.test(k));
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => v[k]);
  }
  return [];
}

/** Applies mappers left to right. */
export function composeSpanMappers(...mappers: readonly SpanMapper[]): SpanMapper {
  return (span) => mappers.reduce((current, map) => map(current), span);
}

/** An OpenAI-style message (`{role, content, tool_calls, tool_call_id}`) as a GenAI semconv `{role, parts}` message. */
function toGenAiMessage(raw: unknown, defaultRole: string): Rec | null {
  if (!isRecord(raw)) return null;
  const m = isRecord(raw.message) ? raw.message : raw;
  const role = str(m.role) ?? defaultRole;
  const parts: Rec[] = [];
  const content = parseJson(m.content);
  const toolCallId = str(m.tool_call_id) ?? str(m.id);
  if (role === 'tool') {
    parts.push({ type: 'tool_call_response', id: toolCallId ?? '', response: m.content ?? null });
  } else if (typeof m.content === 'string') {
    parts.push({ type: 'text', content: m.content });
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (isRecord(part) && typeof part.text === 'string') parts.push({ type: 'text', content: part.text });
    }
  }
  for (const call of listOf(m.tool_calls)) {
    if (!isRecord(call)) continue;
    const fn = isRecord(call.function) ? call.function : call;
    parts.push({
      type: 'tool_call',
      id: str(call.id) ?? '',
      name: str(fn.name) ?? '',
      arguments: parseJson(fn.arguments) ?? {},
    });
  }
  const out: Rec = { role, parts };
  const finish = str(raw.finish_reason) ?? str(m.finish_reason);
  if (finish) out.finish_reason = finish;
  return out;
}

const MESSAGE_EVENT = /^gen_ai\.(system|user|assistant|tool)\.message$/;

/**
 * Lifts legacy GenAI content events into the `gen_ai.input.messages` / `gen_ai.output.messages` attributes:
 * semconv ≤ 1.26 `gen_ai.content.prompt` / `gen_ai.content.completion` events (attributes `gen_ai.prompt` /
 * `gen_ai.completion`, JSON lists of OpenAI messages) and the per-message events `gen_ai.{system,user,assistant,tool}.message`
 * and `gen_ai.choice` when an instrumentation records them as span events. Spans that already hold an LLM call in any
 * supported attribute family, and spans without such events, are returned unchanged.
 */
export function liftGenAiContentEvents(span: Span): Span {
  if (span.events.length === 0 || detectLlmCallFormat(span.attributes) !== null) return span;
  const input: Rec[] = [];
  const output: Rec[] = [];
  for (const event of span.events) {
    const attrs = event.attributes;
    if (event.name === EVENT_GEN_AI_CONTENT_PROMPT) {
      for (const m of listOf(attrs[ATTR_GEN_AI_PROMPT])) {
        const msg = toGenAiMessage(m, 'user');
        if (msg) input.push(msg);
      }
    } else if (event.name === EVENT_GEN_AI_CONTENT_COMPLETION) {
      for (const m of listOf(attrs[ATTR_GEN_AI_COMPLETION])) {
        const msg = toGenAiMessage(m, 'assistant');
        if (msg) output.push(msg);
      }
    } else if (MESSAGE_EVENT.test(event.name)) {
      const role = (MESSAGE_EVENT.exec(event.name) as RegExpExecArray)[1] as string;
      const msg = toGenAiMessage({ role, ...(unflattenAttributes(attrs) as Rec) }, role);
      if (msg) input.push(msg);
    } else if (event.name === EVENT_GEN_AI_CHOICE) {
      const msg = toGenAiMessage(unflattenAttributes(attrs), 'assistant');
      if (msg) output.push(msg);
    }
  }
  if (input.length === 0 && output.length === 0) return span;
  const attributes = { ...span.attributes };
  if (input.length > 0) attributes[ATTR_GEN_AI_INPUT_MESSAGES] = JSON.stringify(input);
  if (output.length > 0) attributes[ATTR_GEN_AI_OUTPUT_MESSAGES] = JSON.stringify(output);
  return { ...span, attributes };
}

/**
 * Gives GenAI `invoke_agent {name}` / `create_agent {name}` spans that lack `gen_ai.agent.name` (and `agent.name`) the
 * agent name from the span name (GenAI semconv span naming), so `agentMatch` can select them.
 */
export function nameGenAiAgentSpans(span: Span): Span {
  const op = span.attributes[ATTR_GEN_AI_OPERATION_NAME];
  if (op !== GEN_AI_OPERATION_INVOKE_AGENT && op !== GEN_AI_OPERATION_CREATE_AGENT) return span;
  if (str(span.attributes[ATTR_GEN_AI_AGENT_NAME]) || str(span.attributes[ATTR_AGENT_NAME])) return span;
  const prefix = `${String(op)} `;
  const name = span.name.startsWith(prefix) ? span.name.slice(prefix.length).trim() : '';
  if (!name) return span;
  return { ...span, attributes: { ...span.attributes, [ATTR_GEN_AI_AGENT_NAME]: name } };
}

/**
 * The generic GenAI-conventions mapper: {@link liftGenAiContentEvents} then {@link nameGenAiAgentSpans}. GenAI JSON
 * messages, the indexed `gen_ai.prompt.*` form and OpenInference `llm.*` attributes need no mapping: `normalizeLlmCall`
 * reads them directly.
 */
export const genAiSpanMapper: SpanMapper = composeSpanMappers(liftGenAiContentEvents, nameGenAiAgentSpans);
