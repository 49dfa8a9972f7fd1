import { describe, expect, it } from 'vitest';
import type { Span } from '../schema/index';
import { makeSpans } from './__fixtures__/span-builders';
import { genAiSpanMapper, liftGenAiContentEvents } from './genai-span-mapper';
import { TraceToTransitions } from './trace-to-transitions';

describe('genAiSpanMapper', () => {
  const [agent, llm, legacy] = makeSpans([
    // An invoke_agent span without gen_ai.agent.name: the name comes from the span name.
    { id: 'a', name: 'invoke_agent writer', start: 0, end: 9, attrs: { 'gen_ai.operation.name': 'invoke_agent' } },
    { id: 'l', parent: 'a', name: 'chat gpt-4o', start: 1, end: 2, attrs: { 'gen_ai.operation.name': 'chat' } },
    { id: 'g', parent: 'a', name: 'chat gpt-4o', start: 3, end: 4, attrs: { 'gen_ai.operation.name': 'chat' } },
  ]);
  const withMessageEvents: Span = {
    ...llm!,
    events: [
      { name: 'gen_ai.system.message', attributes: { content: 'Be brief.' }, timestamp: 1 },
      { name: 'gen_ai.user.message', attributes: { content: 'Weather in Paris?' }, timestamp: 1 },
      {
        name: 'gen_ai.choice',
        attributes: {
          index: 0,
          finish_reason: 'tool_calls',
          'message.role': 'assistant',
          'message.tool_calls.0.id': 'call_1',
          'message.tool_calls.0.function.name': 'get_weather',
          'message.tool_calls.0.function.arguments': '{"city":"Paris"}',
        },
        timestamp: 2,
      },
    ],
  };
  const withContentEvents: Span = {
    ...legacy!,
    events: [
      {
        name: 'gen_ai.content.prompt',
        attributes: {
          'gen_ai.prompt': JSON.stringify([
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          ]),
        },
        timestamp: 3,
      },
      {
        name: 'gen_ai.content.completion',
        attributes: { 'gen_ai.completion': JSON.stringify([{ role: 'assistant', content: 'Sunny.' }]) },
        timestamp: 4,
      },
    ],
  };

  it('lifts per-message events and semconv 1.26 content events into GenAI JSON messages', () => {
    const out = new TraceToTransitions({ spanMapper: genAiSpanMapper, agentMatch: 'writer' }).transitions([
      agent!,
      withMessageEvents,
      withContentEvents,
    ]);
    expect(out).toHaveLength(2);
    expect(out[0]?.agentName).toBe('writer');
    expect(out[0]?.state.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(out[0]?.action.message).toMatchObject({
      role: 'assistant',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    expect(out[1]?.state.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'tool', content: 'sunny', toolCallId: 'call_1' },
    ]);
    expect(out[1]?.action.message).toMatchObject({ role: 'assistant', content: 'Sunny.' });
  });

  it('without the mapper the same spans yield no calls (no content attributes), and the store copy is untouched', () => {
    expect(new TraceToTransitions().transitions([agent!, withMessageEvents])).toEqual([]);
    const before = JSON.stringify(withMessageEvents);
    liftGenAiContentEvents(withMessageEvents);
    expect(JSON.stringify(withMessageEvents)).toBe(before);
  });

  it('leaves spans that already carry messages unchanged', () => {
    const span = { ...withMessageEvents, attributes: { ...llm!.attributes, 'gen_ai.input.messages': '[]' } };
    expect(liftGenAiContentEvents(span)).toBe(span);
  });

  it('TraceToTransitions agentName: a custom resolver replaces agentNameOf for agentMatch', () => {
    const custom = new TraceToTransitions({
      spanMapper: genAiSpanMapper,
      agentName: (span) => (span.name.startsWith('invoke_agent ') ? `team/${span.name.slice(13)}` : null),
      agentMatch: 'team/writer',
    });
    expect(custom.transitions([agent!, withMessageEvents]).map((t) => t.agentName)).toEqual(['team/writer']);
  });
});
