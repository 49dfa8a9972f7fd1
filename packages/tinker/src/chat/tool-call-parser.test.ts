import { describe, expect, it } from 'vitest';
import { jsonMemberText } from './json-value-text';
import { parseAglTinyToolCalls, parseAssistantOutput } from './tool-call-parser';

const ids = (): ((i: number) => string) => {
  let n = 0;
  return () => `call_${++n}`;
};

describe('parseAssistantOutput', () => {
  it('reads Hermes/Qwen3 <tool_call> blocks after text, keeping the arguments text', () => {
    const out = parseAssistantOutput(
      'Let me check.\n<tool_call>\n{"name": "search", "arguments": {"q": "a \\"quoted\\" }", "n": [1, 2]}}\n</tool_call>',
      { format: 'hermes', callId: ids() },
    );
    expect(out.finishReason).toBe('tool_calls');
    expect(out.message.content).toBe('Let me check.');
    expect(out.message.tool_calls).toEqual([
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'search', arguments: '{"q": "a \\"quoted\\" }", "n": [1, 2]}' },
      },
    ]);
  });

  it('leaves a malformed call as content', () => {
    const text = '<tool_call>\n{"name": "search", "arguments": {"q": }\n</tool_call>';
    const out = parseAssistantOutput(text, { format: 'hermes' });
    expect(out).toEqual({ message: { role: 'assistant', content: text }, finishReason: 'stop' });
  });

  it('reads Llama 3.x JSON calls: one object, several split by ";", after <|python_tag|>', () => {
    expect(
      parseAssistantOutput('{"name": "get_weather", "parameters": {"city": "Oslo"}}', {
        format: 'llama3-json',
        callId: ids(),
      }).message,
    ).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } },
      ],
    });
    const two = parseAssistantOutput(
      '<|python_tag|>{"name": "a", "parameters": {"x": "1;2"}}; {"name": "b", "arguments": {}}',
      { format: 'llama3-json', callId: ids() },
    );
    expect(two.message.tool_calls?.map((c) => [c.function.name, c.function.arguments])).toEqual([
      ['a', '{"x": "1;2"}'],
      ['b', '{}'],
    ]);
    expect(parseAssistantOutput('{"answer": 4}', { format: 'llama3-json' }).message.content).toBe('{"answer": 4}');
    expect(parseAssistantOutput('Hello.', { format: 'llama3-json' }).message).toEqual({
      role: 'assistant',
      content: 'Hello.',
    });
  });

  it("parses the embedded policy's <|call|>name{…}<|/call|> calls (agl-tiny), an unclosed last one too", () => {
    const text = 'Let me add.<|call|>calc{"e": "2+3"}<|/call|> <|call|>now';
    expect(parseAssistantOutput(text, { format: 'agl-tiny', callId: ids() })).toEqual({
      message: {
        role: 'assistant',
        content: 'Let me add.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'calc', arguments: '{"e": "2+3"}' } },
          { id: 'call_2', type: 'function', function: { name: 'now', arguments: '{}' } },
        ],
      },
      finishReason: 'tool_calls',
    });
    for (const bad of ['<|call|>calc{"e": 1<|/call|>', '<|call|>calc[1]<|/call|>', 'x<|call|>calc{}<|/call|>tail']) {
      expect(parseAglTinyToolCalls(bad)).toEqual({ content: bad, calls: [] });
      expect(parseAssistantOutput(bad, { format: 'agl-tiny' }).message).toEqual({ role: 'assistant', content: bad });
    }
  });

  it('splits <think> into reasoning_content and marks a cut-off output as length', () => {
    const out = parseAssistantOutput('<think>\nhmm\n</think>\n\nDone.', { format: 'none', stopped: false });
    expect(out).toEqual({
      message: { role: 'assistant', content: 'Done.', reasoning_content: 'hmm' },
      finishReason: 'length',
    });
  });
});

describe('jsonMemberText', () => {
  it('returns a member value exactly as written', () => {
    expect(jsonMemberText('{ "a" : [1, {"b": "}"}] , "c": true }', 'a')).toBe('[1, {"b": "}"}]');
    expect(jsonMemberText('{"a": 1, "c": true}', 'c')).toBe('true');
    expect(jsonMemberText('{"a": 1}', 'z')).toBeNull();
    expect(jsonMemberText('[1]', 'a')).toBeNull();
  });
});
