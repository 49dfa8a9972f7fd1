import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer } from './openai-test-server';
import { toyChatPromptIds, toyTokenize } from './toy-tokenizer';
import type { OpenAiTestServer } from './types';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

describe('startOpenAiTestServer', () => {
  let llm: OpenAiTestServer;
  let openai: OpenAI;

  beforeAll(async () => {
    llm = await startOpenAiTestServer({ apiKey: 'sk-test' });
    openai = new OpenAI({ baseURL: llm.baseURL, apiKey: 'sk-test', maxRetries: 0 });
  });
  afterAll(() => llm.close());

  it('answers arithmetic by default and reports usage', async () => {
    const res = await openai.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'What is 6 * 7?' }],
    });
    expect(res.choices[0]!.message.content).toBe('42');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage!.prompt_tokens).toBe(toyChatPromptIds([{ role: 'user', content: 'What is 6 * 7?' }]).length);
    expect(llm.requests.at(-1)!.path).toBe('/v1/chat/completions');
  });

  it('returns vLLM token ids and logprobs when asked', async () => {
    const messages = [{ role: 'user' as const, content: 'Say hello world' }];
    const raw = (await openai.chat.completions.create({
      model: 'm',
      messages,
      logprobs: true,
      return_token_ids: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming)) as unknown as {
      prompt_token_ids: number[];
      choices: {
        token_ids: number[];
        message: { content: string };
        logprobs: { content: { token: string; logprob: number }[] };
      }[];
    };
    expect(raw.prompt_token_ids).toEqual(toyChatPromptIds(messages));
    expect(raw.choices[0]!.token_ids).toEqual(toyTokenize('Echo: Say hello world'));
    expect(raw.choices[0]!.logprobs.content.map((c) => c.token).join('')).toBe('Echo: Say hello world');
    const again = (await openai.chat.completions.create({
      model: 'm',
      messages,
      return_token_ids: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming)) as unknown as { prompt_token_ids: number[] };
    expect(again.prompt_token_ids).toEqual(raw.prompt_token_ids);
  });

  it('makes tool calls and answers after the tool result', async () => {
    const first = await openai.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Paris' }],
      tools: [weatherTool],
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ input: 'Paris' });
    const second = await openai.chat.completions.create({
      model: 'm',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Paris' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call.id, content: '2 + 19' },
      ],
    });
    expect(second.choices[0]!.message.content).toBe('21');
  });

  it('streams chat chunks with tool-call deltas, token ids and a usage chunk', async () => {
    const local = await startOpenAiTestServer({
      chunkDelayMs: 1,
      respond: () => ({
        content: 'Let me check.',
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }],
      }),
    });
    try {
      const client = new OpenAI({ baseURL: local.baseURL, apiKey: 'x', maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [weatherTool],
        stream: true,
        stream_options: { include_usage: true },
        return_token_ids: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      let text = '';
      let args = '';
      let sawPromptIds = false;
      const tokenIds: number[] = [];
      let usage: OpenAI.CompletionUsage | undefined;
      let finish: string | null = null;
      for await (const chunk of stream) {
        const extra = chunk as unknown as { prompt_token_ids?: number[]; choices: { token_ids?: number[] }[] };
        if (extra.prompt_token_ids) sawPromptIds = true;
        tokenIds.push(...(extra.choices[0]?.token_ids ?? []));
        const choice = chunk.choices[0];
        text += choice?.delta.content ?? '';
        args += choice?.delta.tool_calls?.[0]?.function?.arguments ?? '';
        finish = choice?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe('Let me check.');
      expect(JSON.parse(args)).toEqual({ city: 'Oslo' });
      expect(finish).toBe('tool_calls');
      expect(sawPromptIds).toBe(true);
      expect(tokenIds.slice(0, toyTokenize('Let me check.').length)).toEqual(toyTokenize('Let me check.'));
      expect(usage!.completion_tokens).toBeGreaterThan(0);
      const viaHelper = await client.chat.completions
        .stream({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool] })
        .finalChatCompletion();
      expect(viaHelper.choices[0]!.message.tool_calls![0]!.id).toBe('call_1');
    } finally {
      await local.close();
    }
  });

  it('serves text completions with per-choice vLLM ids, plain and streaming', async () => {
    const res = (await openai.completions.create({
      model: 'm',
      prompt: '3 + 4 =',
      return_token_ids: true,
    } as OpenAI.CompletionCreateParamsNonStreaming)) as unknown as {
      choices: { text: string; prompt_token_ids: number[]; token_ids: number[] }[];
    };
    expect(res.choices[0]!.text).toBe('7');
    expect(res.choices[0]!.prompt_token_ids).toEqual(toyTokenize('3 + 4 ='));
    expect(res.choices[0]!.token_ids).toEqual(toyTokenize('7'));
    const stream = await openai.completions.create({ model: 'm', prompt: 'hello there', stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('Echo: hello there');
  });

  it('lists models and rejects a wrong key', async () => {
    const list = await openai.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['test-model']);
    const bad = new OpenAI({ baseURL: llm.baseURL, apiKey: 'wrong', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
  });

  it('speaks the Responses API, plain and streaming, with function calls', async () => {
    const res = await openai.responses.create({ model: 'm', instructions: 'be brief', input: 'what is 10 - 4' });
    expect(res.output_text).toBe('6');
    const tools = [
      {
        type: 'function' as const,
        name: 'lookup',
        description: 'd',
        parameters: { type: 'object', properties: {} },
        strict: false,
      },
    ];
    const withTool = await openai.responses.create({ model: 'm', input: [{ role: 'user', content: 'Oslo' }], tools });
    const call = withTool.output.find((o) => o.type === 'function_call');
    expect(call?.type === 'function_call' && call.name).toBe('lookup');
    const stream = await openai.responses.create({ model: 'm', input: 'stream me', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(text).toBe('Echo: stream me');
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
  });

  it('speaks Anthropic Messages with tool_use blocks, plain and streaming', async () => {
    const anthropic = new Anthropic({ baseURL: llm.url, apiKey: 'sk-test', maxRetries: 0 });
    const tools = [
      {
        name: 'get_weather',
        description: 'w',
        input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
      },
    ];
    const first = await anthropic.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Rome' }],
      tools,
    });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && use.input).toEqual({ input: 'Rome' });
    const second = await anthropic.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      system: 'sys',
      tools,
      messages: [
        { role: 'user', content: 'Rome' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: use!.type === 'tool_use' ? use!.id : '', content: '5 * 5' }],
        },
      ],
    });
    expect(second.content[0]!.type === 'text' && second.content[0]!.text).toBe('25');
    const stream = anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi there' }],
    });
    let streamed = '';
    stream.on('text', (t) => (streamed += t));
    const final = await stream.finalMessage();
    expect(streamed).toBe('Echo: hi there');
    expect(final.stop_reason).toBe('end_turn');
    const toolStream = anthropic.messages.stream({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Rome' }],
      tools,
    });
    const toolFinal = await toolStream.finalMessage();
    const streamedUse = toolFinal.content.find((b) => b.type === 'tool_use');
    expect(streamedUse?.type === 'tool_use' && streamedUse.input).toEqual({ input: 'Rome' });
  });

  it('returns scripted HTTP errors in the OpenAI error shape', async () => {
    const local = await startOpenAiTestServer({
      respond: () => ({ error: { status: 429, message: 'slow down', type: 'rate_limit_error' } }),
    });
    try {
      const client = new OpenAI({ baseURL: local.baseURL, apiKey: 'x', maxRetries: 0 });
      await expect(
        client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({ status: 429, message: expect.stringContaining('slow down') });
    } finally {
      await local.close();
    }
  });
});

describe('startOpenAiTestServer({ keepRequests: false })', () => {
  it('answers as usual and keeps no request', async () => {
    const llm = await startOpenAiTestServer({ keepRequests: false });
    try {
      const openai = new OpenAI({ baseURL: llm.baseURL, apiKey: 'x', maxRetries: 0 });
      const res = await openai.chat.completions.create({
        model: 'test-model',
        messages: [{ role: 'user', content: 'What is 6 * 7?' }],
      });
      expect(res.choices[0]!.message.content).toBe('42');
      expect((await openai.models.list()).data.map((m) => m.id)).toEqual(['test-model']);
      expect(llm.requests).toEqual([]);
    } finally {
      await llm.close();
    }
  });
});
