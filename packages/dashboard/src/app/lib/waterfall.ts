import { getRewardValue, normalizeLlmCall } from '@agl/core/transitions';
import type { ChatMessage, Span } from '@agl/core/schema';

/** What a span is, for its badge and detail view. */
export type SpanKind = 'llm' | 'tool' | 'reward' | 'agent' | 'exception' | 'other';

/** One bar of the waterfall. */
export interface WaterfallRow {
  span: Span;
  depth: number;
  kind: SpanKind;
  /** Bar start and width as fractions of the attempt's time range (0..1). */
  offset: number;
  width: number;
  durationSeconds: number | null;
  reward: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  /** A one-line label: model, tool name or reward. */
  label: string;
}

/** Messages and usage of an LLM-call span. */
export interface LlmView {
  model: string | null;
  messages: ChatMessage[];
  choices: ChatMessage[];
  inputTokens: number | null;
  outputTokens: number | null;
}

const attr = (span: Span, key: string): unknown => span.attributes[key];
const num = (value: unknown): number | null =>
  typeof value === 'number'
    ? value
    : typeof value === 'string' && value !== '' && Number.isFinite(Number(value))
      ? Number(value)
      : null;

/** The LLM call recorded on a span (any attribute family the converter reads), or `null`. */
export function llmViewOf(span: Span): LlmView | null {
  const call = normalizeLlmCall(span.attributes);
  if (call === null) return null;
  return {
    model: call.model,
    messages: call.messages,
    choices: call.choices,
    inputTokens: call.usage.inputTokens,
    outputTokens: call.usage.outputTokens,
  };
}

/** Classifies a span. */
export function spanKindOf(span: Span): SpanKind {
  if (getRewardValue(span) !== null) return 'reward';
  if (/openai\.(chat\.)?completion/.test(span.name) || normalizeLlmCall(span.attributes) !== null) return 'llm';
  if (attr(span, 'tool.name') !== undefined || attr(span, 'gen_ai.tool.name') !== undefined) return 'tool';
  if (span.name === 'agentlightning.exception' || span.status.statusCode === 'ERROR') return 'exception';
  if (attr(span, 'agent.name') !== undefined || attr(span, 'gen_ai.agent.name') !== undefined) return 'agent';
  return 'other';
}

/**
 * Orders spans as a tree (parents before children, siblings by start time then sequence id) and places each as a
 * bar on the attempt's time axis. Spans whose parent is not in the list are roots, so none is dropped.
 */
export function buildWaterfall(spans: readonly Span[]): WaterfallRow[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | null, Span[]>();
  for (const span of spans) {
    const parent =
      span.parentId !== null && ids.has(span.parentId) && span.parentId !== span.spanId ? span.parentId : null;
    const list = children.get(parent) ?? [];
    list.push(span);
    children.set(parent, list);
  }
  const starts = spans.map((s) => s.startTime).filter((t): t is number => t !== null);
  const ends = spans.map((s) => s.endTime ?? s.startTime).filter((t): t is number => t !== null);
  const t0 = starts.length ? Math.min(...starts) : 0;
  const t1 = ends.length ? Math.max(...ends, t0) : t0;
  const range = t1 - t0 || 1;
  const order = (a: Span, b: Span) => (a.startTime ?? 0) - (b.startTime ?? 0) || a.sequenceId - b.sequenceId;
  const rows: WaterfallRow[] = [];
  const seen = new Set<string>();
  const visit = (span: Span, depth: number) => {
    if (seen.has(span.spanId)) return;
    seen.add(span.spanId);
    const kind = spanKindOf(span);
    const llm = kind === 'llm' ? llmViewOf(span) : null;
    const start = span.startTime ?? t0;
    const end = span.endTime ?? start;
    const reward = kind === 'reward' ? getRewardValue(span) : null;
    const toolName = attr(span, 'tool.name') ?? attr(span, 'gen_ai.tool.name');
    rows.push({
      span,
      depth,
      kind,
      offset: (start - t0) / range,
      width: Math.max(0, (end - start) / range),
      durationSeconds: span.startTime !== null && span.endTime !== null ? span.endTime - span.startTime : null,
      reward,
      inputTokens: llm?.inputTokens ?? num(attr(span, 'gen_ai.usage.input_tokens')),
      outputTokens: llm?.outputTokens ?? num(attr(span, 'gen_ai.usage.output_tokens')),
      label:
        kind === 'reward'
          ? `reward ${reward}`
          : kind === 'llm'
            ? (llm?.model ?? String(attr(span, 'gen_ai.request.model') ?? ''))
            : kind === 'tool'
              ? String(toolName)
              : '',
    });
    for (const child of (children.get(span.spanId) ?? []).sort(order)) visit(child, depth + 1);
  };
  for (const root of (children.get(null) ?? []).sort(order)) visit(root, 0);
  // Cycles (a → b → a) have no root; show them flat rather than lose them.
  for (const span of [...spans].sort(order)) visit(span, 0);
  return rows;
}

/** Text of a chat message's content (structured parts joined). */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === 'object' && 'text' in part
          ? String((part as { text: unknown }).text)
          : JSON.stringify(part),
      )
      .join('\n');
  }
  return JSON.stringify(content);
}
