import { canonicalJson, isRewardScope, TraceToMessages, type OpenAiChatMessage } from '@agl/core/transitions';
import type { Span } from '@agl/core/schema';

function contentText(content: OpenAiChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === 'object' && !Array.isArray(part) && typeof part.text === 'string'
          ? part.text
          : JSON.stringify(part),
      )
      .join('\n');
  }
  return JSON.stringify(content);
}

function renderMessage(m: OpenAiChatMessage): string {
  if (m.role === 'tool') return `[tool result ${m.tool_call_id ?? ''}] ${contentText(m.content)}`;
  const calls = (m.tool_calls ?? []).map(
    (c) => `[${m.role} tool call ${c.id}] ${c.function.name}(${c.function.arguments})`,
  );
  const text = contentText(m.content);
  return [...(text !== '' ? [`[${m.role}] ${text}`] : []), ...calls].join('\n');
}

/** Spans inside a reward scope (a judge's own LLM calls recorded under the rollout) are not the agent's conversation. */
function outsideRewardScopes(spans: readonly Span[]): Span[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const inReward = (span: Span): boolean => {
    const seen = new Set<string>();
    for (let s: Span | undefined = span; s && !seen.has(s.spanId); s = s.parentId ? byId.get(s.parentId) : undefined) {
      if (isRewardScope(s)) return true;
      seen.add(s.spanId);
    }
    return false;
  };
  return spans.filter((s) => !inReward(s));
}

/**
 * The conversation of a rollout as plain text for a judge, rebuilt from its spans with core's `TraceToMessages`: the
 * task input, then every message of its LLM calls in order (prompts, tool calls and their results, the final answer).
 * A call that continues the previous one adds only its new messages. Reward spans and LLM calls inside them are left
 * out.
 */
export function rolloutTranscript(spans: readonly Span[], input?: unknown): string {
  const rows = new TraceToMessages().adapt(outsideRewardScopes(spans));
  const messages: OpenAiChatMessage[] = [];
  for (const row of rows) {
    const continues =
      messages.length <= row.messages.length &&
      messages.every((m, i) => canonicalJson(m) === canonicalJson(row.messages[i]));
    messages.push(...(continues ? row.messages.slice(messages.length) : row.messages));
  }
  const parts =
    input === undefined ? [] : [`<task>\n${typeof input === 'string' ? input : JSON.stringify(input)}\n</task>`];
  const body = messages.map(renderMessage).filter((line) => line !== '');
  return [...parts, ...(body.length > 0 ? body : ['(no LLM calls recorded)'])].join('\n');
}
