import { describe, expect, it } from 'vitest';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { renderChat } from './chat-template';
import { parseToolCalls } from './tool-call-parser';

describe('parseToolCalls', () => {
  it('parses one or several calls after optional content', () => {
    expect(parseToolCalls('Let me check.<|call|>calc{"e":"1+2"}<|/call|>')).toEqual({
      content: 'Let me check.',
      toolCalls: [{ name: 'calc', arguments: '{"e":"1+2"}' }],
      malformed: false,
    });
    const two = parseToolCalls('<|call|>a{"x":1}<|/call|>\n<|call|>b.c {}<|/call|>');
    expect(two.toolCalls).toEqual([
      { name: 'a', arguments: '{"x":1}' },
      { name: 'b.c', arguments: '{}' },
    ]);
  });

  it('accepts a last call without its closing token, and a call without arguments', () => {
    expect(parseToolCalls('<|call|>now').toolCalls).toEqual([{ name: 'now', arguments: '{}' }]);
  });

  it('returns plain content for malformed calls and text without calls', () => {
    expect(parseToolCalls('just text')).toEqual({ content: 'just text', toolCalls: [], malformed: false });
    for (const bad of [
      '<|call|>calc{"e":',
      '<|call|>9bad{}<|/call|>',
      '<|call|>f[1]<|/call|>',
      '<|call|>f{}<|/call|>junk',
    ]) {
      expect(parseToolCalls(bad)).toEqual({ content: bad, toolCalls: [], malformed: true });
    }
  });
});

describe('renderChat', () => {
  const tok = new TinyTokenizer();

  it('renders tools, roles and tool calls, and masks only assistant output', () => {
    const r = renderChat({
      tokenizer: tok,
      tools: [{ type: 'function', function: { name: 'calc', parameters: { properties: { e: {} } } } }],
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'add' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'x', type: 'function', function: { name: 'calc', arguments: '{"e":"1"}' } }],
        },
        { role: 'tool', tool_call_id: 'x', content: '1' },
      ],
    });
    expect(tok.decode(r.ids, { keepSpecial: true })).toBe(
      '<|bos|><|tools|>calc(e)<|end|><|system|>be brief<|end|><|user|>add<|end|><|assistant|><|call|>calc{"e":"1"}<|/call|><|end|><|tool|>1<|end|><|assistant|>',
    );
    const masked = r.ids.filter((_, i) => r.assistantMask[i] === 1);
    expect(tok.decode(masked, { keepSpecial: true })).toBe('<|call|>calc{"e":"1"}<|/call|><|end|>');
    const parsed = parseToolCalls(tok.decode(masked.slice(0, -1), { keepSpecial: true }));
    expect(parsed.toolCalls).toEqual([{ name: 'calc', arguments: '{"e":"1"}' }]);
  });

  it('rejects unknown roles with the offending index', () => {
    expect(() => renderChat({ tokenizer: tok, messages: [{ role: 'robot', content: 'x' }] })).toThrow(
      /messages\[0\]\.role "robot"/,
    );
  });
});
