import { describe, expect, it } from 'vitest';
import { detectLlmCallFormat, normalizeLlmCall } from './llm-call-normalizer';

describe('normalizeLlmCall: Contract 2 / AGL 0.3 flattened layout', () => {
  it('reads messages, tool calls, request, response, usage, token ids and logprobs', () => {
    const call = normalizeLlmCall({
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'm',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'add 2 and 3',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.finish_reason': 'tool_calls',
      'gen_ai.completion.0.tool_calls.0.id': 'call_1',
      'gen_ai.completion.0.tool_calls.0.name': 'add',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"a":2,"b":3}',
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.model': 'm-2024',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.completion_tokens': 4,
      prompt_token_ids: [1, 2, 3],
      response_token_ids: [4],
      'logprobs.content': '[{"token":"x","logprob":-0.5}]',
    });
    expect(call).toMatchObject({
      format: 'agl',
      messages: [{ role: 'user', content: 'add 2 and 3' }],
      choices: [
        {
          role: 'assistant',
          toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}' }],
          finishReason: 'tool_calls',
        },
      ],
      request: { model: 'm', temperature: 0.2 },
      response: { id: 'chatcmpl-1', model: 'm-2024' },
      responseId: 'chatcmpl-1',
      model: 'm',
      promptTokenIds: [1, 2, 3],
      responseTokenIds: [4],
      logprobs: [{ token: 'x', logprob: -0.5 }],
      usage: { inputTokens: 12, outputTokens: 4 },
    });
  });

  it('ignores invalid token id values', () => {
    const call = normalizeLlmCall({ 'gen_ai.prompt.0.content': 'x', prompt_token_ids: ['a'] as unknown as string[] });
    expect(call?.promptTokenIds).toBeNull();
    expect(call?.messages[0]?.role).toBe('user');
  });

  it('returns null for spans without an LLM call', () => {
    expect(normalizeLlmCall({ 'agent.name': 'x' })).toBeNull();
    expect(detectLlmCallFormat({})).toBeNull();
  });
});

describe('normalizeLlmCall: GenAI semconv JSON messages', () => {
  it('splits tool_call_response parts into tool messages and keeps image parts', () => {
    const call = normalizeLlmCall({
      'gen_ai.operation.name': 'chat',
      'gen_ai.input.messages': JSON.stringify([
        {
          role: 'user',
          parts: [
            { type: 'text', content: 'see' },
            { type: 'uri', modality: 'image', uri: 'https://x/i.png' },
          ],
        },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: { x: 1 } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: { ok: true } }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: 'done' }], finish_reason: 'stop' },
      ]),
      'gen_ai.tool.definitions': JSON.stringify([
        { type: 'function', name: 'f', description: 'd', parameters: { type: 'object' } },
      ]),
      'gen_ai.usage.input_tokens': 3,
    });
    expect(call?.format).toBe('genai');
    expect(call?.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image_url', image_url: { url: 'https://x/i.png' } },
        ],
      },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{"x":1}' }] },
      { role: 'tool', content: '{"ok":true}', toolCallId: 'c1' },
    ]);
    expect(call?.choices).toEqual([{ role: 'assistant', content: 'done', finishReason: 'stop' }]);
    expect(call?.tools).toEqual([
      { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } },
    ]);
    expect(call?.imageUrls).toEqual(['https://x/i.png']);
  });
});

describe('normalizeLlmCall: OpenInference', () => {
  it('reads messages, content parts, tool calls, tools and token counts', () => {
    const call = normalizeLlmCall({
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'gpt-x',
      'llm.invocation_parameters': '{"temperature":0.1}',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.contents.0.message_content.type': 'text',
      'llm.input_messages.0.message.contents.0.message_content.text': 'look',
      'llm.input_messages.0.message.contents.1.message_content.type': 'image',
      'llm.input_messages.0.message.contents.1.message_content.image.image.url': 'https://x/p.png',
      'llm.input_messages.1.message.role': 'tool',
      'llm.input_messages.1.message.content': '42',
      'llm.input_messages.1.message.tool_call_id': 'c0',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'c1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Oslo"}',
      'llm.tools.0.tool.json_schema':
        '{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}',
      'llm.token_count.prompt': 12,
      'llm.token_count.completion': 5,
    });
    expect(call).toMatchObject({
      format: 'openinference',
      model: 'gpt-x',
      request: { temperature: 0.1, model: 'gpt-x' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'https://x/p.png' } },
          ],
        },
        { role: 'tool', content: '42', toolCallId: 'c0' },
      ],
      choices: [{ role: 'assistant', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: '', parameters: { type: 'object' } } }],
      usage: { inputTokens: 12, outputTokens: 5 },
    });
  });
});

describe('normalizeLlmCall: agentlightning.operation form (LiteLLM / Weave)', () => {
  it('reads input messages, output choices and operation token ids', () => {
    const call = normalizeLlmCall({
      'agentlightning.operation.input.model': 'm',
      'agentlightning.operation.input.messages.0.role': 'user',
      'agentlightning.operation.input.messages.0.content': 'q',
      'agentlightning.operation.output.id': 'op-1',
      'agentlightning.operation.output.prompt_token_ids': [7, 8],
      'agentlightning.operation.output.choices.0.message.role': 'assistant',
      'agentlightning.operation.output.choices.0.message.content': 'a',
      'agentlightning.operation.output.choices.0.token_ids': [9],
    });
    expect(call).toMatchObject({
      format: 'operation',
      messages: [{ role: 'user', content: 'q' }],
      choices: [{ role: 'assistant', content: 'a' }],
      responseId: 'op-1',
      promptTokenIds: [7, 8],
      responseTokenIds: [9],
      request: { model: 'm' },
    });
  });
});

describe('normalizeLlmCall: legacy function calling (functions / function_call)', () => {
  it('reads a flattened function_call, the function result message and the offered functions', () => {
    const call = normalizeLlmCall({
      'gen_ai.request.functions.0.name': 'get_weather',
      'gen_ai.request.functions.0.parameters': '{"type":"object"}',
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'weather in Paris?',
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.function_call.name': 'get_weather',
      'gen_ai.prompt.1.function_call.arguments': '{"city":"Paris"}',
      'gen_ai.prompt.2.role': 'function',
      'gen_ai.prompt.2.name': 'get_weather',
      'gen_ai.prompt.2.content': 'sunny',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.finish_reason': 'function_call',
      'gen_ai.completion.0.function_call.name': 'get_weather',
      'gen_ai.completion.0.function_call.arguments': '{"city":"Lyon"}',
    });
    expect(call?.messages[1]).toMatchObject({
      role: 'assistant',
      toolCalls: [{ id: '', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    expect(call?.messages[2]).toMatchObject({ role: 'function', name: 'get_weather', content: 'sunny' });
    expect(call?.choices[0]).toMatchObject({
      toolCalls: [{ name: 'get_weather', arguments: '{"city":"Lyon"}' }],
      finishReason: 'function_call',
    });
    expect(call?.tools?.map((t) => t.function.name)).toEqual(['get_weather']);
  });

  it('reads function_call in the operation form (raw OpenAI messages)', () => {
    const call = normalizeLlmCall({
      'agentlightning.operation.input.messages.0.role': 'user',
      'agentlightning.operation.input.messages.0.content': 'weather?',
      'agentlightning.operation.input.functions.0.name': 'get_weather',
      'agentlightning.operation.output.choices.0.message.role': 'assistant',
      'agentlightning.operation.output.choices.0.message.function_call.name': 'get_weather',
      'agentlightning.operation.output.choices.0.message.function_call.arguments': '{}',
    });
    expect(call?.choices[0]?.toolCalls).toEqual([{ id: '', name: 'get_weather', arguments: '{}' }]);
    expect(call?.tools?.[0]?.function.name).toBe('get_weather');
  });
});
