import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/index';
import { llmSpan, makeSpans } from './__fixtures__/span-builders';
import { normalizeLlmCall } from './llm-call-normalizer';
import { TraceToMessages } from './trace-to-messages';

describe('TraceToMessages (checklist 40, messages part)', () => {
  const spans = makeSpans([
    llmSpan('llm', 1, {
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'You are a calculator.',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'What is 2+3?',
      'gen_ai.prompt.2.role': 'tool',
      'gen_ai.prompt.2.content': '5',
      'gen_ai.prompt.2.tool_call_id': 'call_0',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Let me check.',
      'gen_ai.request.model': 'm',
      'gen_ai.request.functions.0.name': 'add',
      'gen_ai.request.functions.0.description': 'Adds numbers',
      'gen_ai.request.functions.0.parameters': '{"type":"object","properties":{"a":{"type":"number"}}}',
      'gen_ai.request.functions.1.name': 'noop',
    }),
    {
      id: 'tool',
      parent: 'llm',
      name: 'tool.add',
      start: 1.5,
      end: 1.6,
      attrs: {
        'tool.name': 'add',
        'tool.parameters': '{"a":2}',
        'tool.call.id': 'call_1',
        'tool.call.type': 'function',
      },
    },
    { id: 'other', name: 'not-an-llm', start: 0, end: 3, attrs: { foo: 'bar' } },
  ]);

  it('turns tool children into tool_calls, functions into tools, tool prompts into tool messages', () => {
    const rows = new TraceToMessages().adapt(spans);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.messages).toEqual([
      { role: 'system', content: 'You are a calculator.' },
      { role: 'user', content: 'What is 2+3?' },
      { role: 'tool', content: '5', tool_call_id: 'call_0' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2}' } }],
      },
    ]);
    expect(rows[0]?.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Adds numbers',
          parameters: { type: 'object', properties: { a: { type: 'number' } } },
        },
      },
      { type: 'function', function: { name: 'noop', description: '', parameters: { type: 'object', properties: {} } } },
    ]);
    const jsonl = new TraceToMessages().toJsonl(spans);
    expect(jsonl.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(jsonl) as unknown).toHaveProperty('tools');
  });

  it('rejects a gen_ai.prompt that is not a list', () => {
    const bad = makeSpans([
      { id: 'x', name: 'openai.chat.completion', start: 0, end: 1, attrs: { 'gen_ai.prompt.role': 'user' } },
    ]);
    expect(() => new TraceToMessages().adapt(bad)).toThrow(ValidationError);
  });
});

describe('image urls of multimodal prompts (checklist 40)', () => {
  it('reads image_url parts in order from JSON-string content', () => {
    const call = normalizeLlmCall({
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': JSON.stringify([
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'https://x/1.png' } },
        { type: 'image_url', image_url: { url: 'https://x/2.png' } },
      ]),
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': JSON.stringify([{ type: 'image_url', image_url: { url: 'https://x/3.png' } }]),
    });
    expect(call?.imageUrls).toEqual(['https://x/1.png', 'https://x/2.png', 'https://x/3.png']);
  });

  it('reads numeric-key dict content parts', () => {
    const call = normalizeLlmCall({
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content.0.type': 'image_url',
      'gen_ai.prompt.0.content.0.image_url.url': 'https://x/a.png',
      'gen_ai.prompt.0.content.1.type': 'text',
      'gen_ai.prompt.0.content.1.text': 'and',
    });
    expect(call?.imageUrls).toEqual(['https://x/a.png']);
  });

  it('gives [] for invalid payloads', () => {
    const call = normalizeLlmCall({ 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': '[not json' });
    expect(call?.imageUrls).toEqual([]);
    expect(call?.messages[0]?.content).toBe('[not json');
  });
});
