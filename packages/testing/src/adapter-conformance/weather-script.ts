import type { Span, Transition } from '@agl/core';
import type { TestLlmReply, TestLlmRequest } from '../openai-test-server/types';

/** The two-step tool-using task every adapter's agent runs. */
export const WEATHER_TASK = {
  system: 'You are a weather agent. Use the get_weather tool.',
  user: 'What is the weather in Paris?',
  tool: 'get_weather',
  toolArgs: { city: 'Paris' },
  /** What the tool returns for Paris (`sunny in ${city}`). */
  toolResult: 'sunny in Paris',
  answer: 'It is sunny in Paris.',
  model: 'test-model',
} as const;

/** The scripted model: call `get_weather({city:"Paris"})` first, answer once the tool result is in. */
export function weatherRespond(request: TestLlmRequest): TestLlmReply {
  if (request.messages.some((m) => m.role === 'tool')) return { content: WEATHER_TASK.answer };
  return { toolCalls: [{ name: WEATHER_TASK.tool, arguments: WEATHER_TASK.toolArgs }] };
}

/** A transition reduced to what every framework must agree on (ids dropped, arguments parsed). */
export interface NormalizedTransition {
  agentName: string | null;
  state: {
    role: string;
    content: string | null;
    toolCalls?: { name: string; args: unknown }[];
    answersCall?: boolean;
  }[];
  action: { content: string | null; toolCalls?: { name: string; args: unknown }[] };
}

function parse(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

const text = (content: unknown): string | null =>
  content === undefined || content === null || content === ''
    ? null
    : typeof content === 'string'
      ? content
      : JSON.stringify(content);

/** Normalises transitions; system messages are dropped unless `keepSystem`. */
export function normalizeTransitions(transitions: readonly Transition[], keepSystem = false): NormalizedTransition[] {
  return transitions.map((t) => {
    const callIds = new Set<string>();
    const state = t.state.messages
      .filter((m) => keepSystem || m.role !== 'system')
      .map((m) => {
        m.toolCalls?.forEach((c) => callIds.add(c.id));
        const out: NormalizedTransition['state'][number] = { role: m.role, content: text(m.content) };
        if (m.toolCalls?.length) out.toolCalls = m.toolCalls.map((c) => ({ name: c.name, args: parse(c.arguments) }));
        if (m.role === 'tool') out.answersCall = !!m.toolCallId && callIds.has(m.toolCallId);
        return out;
      });
    const action: NormalizedTransition['action'] = { content: text(t.action.message.content) };
    const calls = t.action.message.toolCalls;
    if (calls?.length) action.toolCalls = calls.map((c) => ({ name: c.name, args: parse(c.arguments) }));
    return { agentName: t.agentName, state, action };
  });
}

/** The transitions every adapter must produce for the weather task (system messages dropped). */
export function expectedWeatherTransitions(agentName: string | null): NormalizedTransition[] {
  const call = { name: WEATHER_TASK.tool, args: WEATHER_TASK.toolArgs };
  const user = { role: 'user', content: WEATHER_TASK.user };
  return [
    { agentName, state: [user], action: { content: null, toolCalls: [call] } },
    {
      agentName,
      state: [
        user,
        { role: 'assistant', content: null, toolCalls: [call] },
        { role: 'tool', content: WEATHER_TASK.toolResult, answersCall: true },
      ],
      action: { content: WEATHER_TASK.answer },
    },
  ];
}

/** Names of the ancestors of a span (closest first). */
export function ancestorsOf(span: Span, spans: readonly Span[]): Span[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const out: Span[] = [];
  let parent = span.parentId ? byId.get(span.parentId) : undefined;
  while (parent && out.length < 100) {
    out.push(parent);
    parent = parent.parentId ? byId.get(parent.parentId) : undefined;
  }
  return out;
}
