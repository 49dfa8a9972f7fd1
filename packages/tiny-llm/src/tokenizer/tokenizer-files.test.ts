import { ChatTemplateError, ChatTokenizer } from '@agl/tinker';
import { describe, expect, it } from 'vitest';
import { renderChat } from '../chat/chat-template';
import type { WireChatMessage, WireTool } from '../chat/chat-types';
import { parseToolCalls } from '../chat/tool-call-parser';
import { TinyTokenizer, trainBpe } from './tiny-tokenizer';
import { tinyTokenizerFiles, tinyTokenizerId } from './tokenizer-files';

const CORPUS = [
  'What is 12 + 30? Use the calculator tool.',
  'calculator{"expression":"12+30"} The answer is 42.',
  'Héllo wörld — naïve café ✓ 数学 🙂 emoji and   spaces\ttabs\nnewlines',
  'SELECT name FROM users WHERE id = 3; -- the answer is 42',
];

const TOOLS: WireTool[] = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      description: 'Evaluates arithmetic.',
      parameters: { type: 'object', properties: { expression: { type: 'string' }, precision: { type: 'integer' } } },
    },
  },
  { type: 'function', function: { name: 'now' } },
  { type: 'function', function: { name: 'noop', parameters: { type: 'object' } } },
];

const CONVERSATIONS: Array<{ messages: WireChatMessage[]; tools?: WireTool[] }> = [
  { messages: [{ role: 'user', content: 'What is 12 + 30?' }] },
  {
    tools: TOOLS,
    messages: [
      { role: 'system', content: 'You are a calculator agent.' },
      { role: 'user', content: 'What is 12 + 30? Use the calculator tool.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'calculator', arguments: '{"expression":"12+30"}' } },
          { id: 'call_2', type: 'function', function: { name: 'now', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '42' },
      { role: 'tool', tool_call_id: 'call_2', content: '2026-12-07' },
      { role: 'assistant', content: 'The answer is 42.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Héllo wörld — ' },
          { type: 'text', text: '数学 🙂' },
        ],
      },
    ],
  },
  {
    tools: TOOLS.slice(0, 1),
    messages: [
      { role: 'developer', content: '  leading and trailing spaces  ' },
      { role: 'user', content: '' },
      { role: 'assistant', content: 'Let me check.', tool_calls: [] },
      { role: 'function', name: 'calculator', content: 'naïve café\n\ttabs' },
    ],
  },
];

function both(tok: TinyTokenizer) {
  const files = tinyTokenizerFiles(tok);
  const chat = ChatTokenizer.fromFiles({ ...files, source: files.tokenizerId });
  return { files, chat };
}

describe("the embedded policy's tokenizer and chat template in Hugging Face's portable form", () => {
  for (const [label, tok] of [
    ['bytes only', new TinyTokenizer()],
    ['with learned merges', new TinyTokenizer(trainBpe({ corpus: CORPUS, merges: 120 }))],
  ] as const) {
    it(`renders the same prompt token ids as the server's own template (${label}), tools included`, () => {
      const { chat } = both(tok);
      for (const { messages, tools } of CONVERSATIONS) {
        const own = renderChat({ tokenizer: tok, messages, tools });
        const portable = chat.renderPrompt(messages as never, { tools: tools as never });
        expect(portable.ids).toEqual(own.ids);
        expect(chat.decode(portable.ids)).toBe(tok.decode(own.ids, { keepSpecial: true }));
      }
    });
  }

  it('encodes and decodes plain text to the same ids, stops on <|end|> and parses tool calls back', () => {
    const tok = new TinyTokenizer(trainBpe({ corpus: CORPUS, merges: 120 }));
    const { chat, files } = both(tok);
    for (const text of CORPUS) {
      expect(chat.encode(text)).toEqual(tok.encode(text));
      expect(chat.decode(tok.encode(text))).toBe(text);
    }
    expect(chat.stopTokenIds).toEqual([tok.specialId('<|end|>')]);
    expect(chat.toolCallFormat).toBe('agl-tiny');
    const sampled = tok.encodeSegments([
      { text: 'Checking.' },
      { special: '<|call|>' },
      { text: 'calculator{"expression": "12+30"}' },
      { special: '<|/call|>' },
      { special: '<|end|>' },
    ]);
    const parsed = chat.parseOutput(sampled);
    const own = parseToolCalls(tok.decode(sampled.slice(0, -1), { keepSpecial: true }));
    expect(parsed.finishReason).toBe('tool_calls');
    expect(parsed.message.content).toBe(own.content);
    expect(parsed.message.tool_calls?.map((c) => c.function)).toEqual(
      own.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
    );
    expect(files.tokenizerId).toBe(tinyTokenizerId(tok));
    expect(files.tokenizerId).toMatch(/^agl-tiny\/\d+-[0-9a-f]{12}$/);
    expect(tinyTokenizerId(new TinyTokenizer())).not.toBe(files.tokenizerId);
  });

  it('a role the template does not know fails with a message naming it, as the server does', () => {
    const { chat } = both(new TinyTokenizer());
    const messages = [{ role: 'critic', content: 'x' }];
    expect(() => renderChat({ tokenizer: new TinyTokenizer(), messages })).toThrow(/messages\[0\]\.role "critic"/);
    expect(() => chat.renderPrompt(messages)).toThrow(ChatTemplateError);
    expect(() => chat.renderPrompt(messages)).toThrow(/messages\[0\]\.role "critic" is not supported/);
  });
});
