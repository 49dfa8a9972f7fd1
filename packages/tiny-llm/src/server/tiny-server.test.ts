import { ChatOpenAI } from '@langchain/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useTinyServer } from '../__fixtures__/tiny-server-suite';
import { CALC_TOOL, toolModelDir } from '../__fixtures__/tool-model';
import { renderChat } from '../chat/chat-template';
import { WeightStore } from '../model/weight-store';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { TrainerCore } from '../train/trainer-core';
import { startTinyServer } from './tiny-server';

// vLLM's extras are not in the openai SDK's types.
type Extra = { prompt_token_ids?: number[]; choices: Array<{ token_ids?: number[] }> };
const tok = new TinyTokenizer();
const suite = useTinyServer(toolModelDir, { version: 'v1' });

describe('tiny server through the openai suite.client', () => {
  it('lists the served version as the model id', async () => {
    const models = await suite.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['agl-tiny@v1']);
  });

  it('answers a tool-calling chat with token ids that decode to the call', async () => {
    const messages = [{ role: 'user' as const, content: 'add 2 3' }];
    const res = await suite.client.chat.completions.create({
      model: 'anything',
      messages,
      tools: [CALC_TOOL],
      temperature: 0,
      logprobs: true,
      // @ts-expect-error vLLM extension
      return_token_ids: true,
    });
    const choice = res.choices[0]!;
    expect(res.model).toBe('agl-tiny@v1');
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'calc', arguments: '{"e":"2+3"}' } },
    ]);
    const extra = res as unknown as Extra;
    expect(extra.prompt_token_ids).toEqual(renderChat({ tokenizer: tok, messages, tools: [CALC_TOOL] }).ids);
    const ids = extra.choices[0]!.token_ids!;
    expect(tok.decode(ids, { keepSpecial: true })).toBe('<|call|>calc{"e":"2+3"}<|/call|><|end|>');
    expect(choice.logprobs!.content!.map((c) => c.token)).toEqual(ids.map((id) => tok.tokenText(id)));
    expect(res.usage).toMatchObject({ prompt_tokens: extra.prompt_token_ids!.length, completion_tokens: ids.length });
  });

  it("returns text whose token ids decode to it, with logprobs equal to the model's log-softmax", async () => {
    const res = await suite.client.chat.completions.create({
      model: 'agl-tiny',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.7,
      seed: 3,
      logprobs: true,
      top_logprobs: 2,
      // @ts-expect-error vLLM extension
      return_token_ids: true,
    });
    const extra = res as unknown as Extra;
    const ids = extra.choices[0]!.token_ids!;
    expect(res.choices[0]!.message.content).toBe('Hello there! ✓');
    expect(tok.decode(ids)).toBe(res.choices[0]!.message.content);
    const core = await TrainerCore.create({ weights: (await new WeightStore({ dir: suite.dir }).load('v1')).weights });
    const [expected] = core.responseLogprobs([{ promptTokenIds: extra.prompt_token_ids!, responseTokenIds: ids }]);
    core.dispose();
    const got = res.choices[0]!.logprobs!.content!;
    expect(got).toHaveLength(ids.length);
    got.forEach((c, i) => {
      expect(c.logprob).toBeCloseTo(expected![i]!, 4);
      expect(c.top_logprobs).toHaveLength(2);
      expect(c.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(c.logprob - 1e-9);
    });
  });

  it('streams tool calls and text with per-chunk token ids matching the non-streamed answer', async () => {
    for (const [content, tools] of [
      ['add 2 3', [CALC_TOOL]],
      ['hi', undefined],
    ] as const) {
      const base = {
        model: 'm',
        messages: [{ role: 'user' as const, content }],
        temperature: 0,
        ...(tools ? { tools: [...tools] } : {}),
        return_token_ids: true,
      };
      const once = (await suite.client.chat.completions.create(
        base as OpenAI.ChatCompletionCreateParamsNonStreaming,
      )) as unknown as Extra & OpenAI.ChatCompletion;
      const stream = await suite.client.chat.completions.create({
        ...base,
        stream: true,
        stream_options: { include_usage: true },
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      let text = '';
      const ids: number[] = [];
      const calls: Array<{ name?: string; arguments?: string }> = [];
      let promptIds: number[] | undefined;
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        promptIds ??= (chunk as unknown as Extra).prompt_token_ids;
        if (chunk.usage) usage = chunk.usage;
        const c = chunk.choices[0];
        if (!c) continue;
        text += c.delta.content ?? '';
        ids.push(...((c as { token_ids?: number[] }).token_ids ?? []));
        for (const tc of c.delta.tool_calls ?? [])
          calls[tc.index] = { name: tc.function?.name, arguments: tc.function?.arguments };
        finish = c.finish_reason ?? finish;
      }
      expect(promptIds).toEqual(once.prompt_token_ids);
      expect(ids).toEqual(once.choices[0]!.token_ids);
      expect(text).toBe(once.choices[0]!.message.content ?? '');
      expect(finish).toBe(once.choices[0]!.finish_reason);
      expect(calls).toEqual(
        (once.choices[0]!.message.tool_calls ?? []).map((t) => ({
          name: (t as OpenAI.ChatCompletionMessageFunctionToolCall).function.name,
          arguments: (t as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments,
        })),
      );
      expect(usage?.completion_tokens).toBe(ids.length);
    }
  });

  it('serves raw completions from token ids with vLLM token ids and logprobs', async () => {
    const prompt = renderChat({ tokenizer: tok, messages: [{ role: 'user', content: 'hi' }] }).ids;
    const res = (await suite.client.completions.create({
      model: 'm',
      prompt,
      max_tokens: 40,
      temperature: 0,
      logprobs: 1,
      // @ts-expect-error vLLM extension
      return_token_ids: true,
    })) as unknown as OpenAI.Completion & { choices: Array<{ token_ids: number[]; prompt_token_ids: number[] }> };
    const c = res.choices[0]!;
    expect(c.text).toBe('Hello there! ✓');
    expect(c.prompt_token_ids).toEqual(prompt);
    expect(tok.decode(c.token_ids)).toBe(c.text);
    expect(c.logprobs!.token_logprobs).toHaveLength(c.token_ids.length);
    expect(c.finish_reason).toBe('stop');
  });

  it('samples reproducibly with a seed, n choices, and stop strings', async () => {
    const req = {
      model: 'm',
      messages: [{ role: 'user' as const, content: 'hi' }],
      temperature: 1.5,
      seed: 11,
      n: 3,
      max_tokens: 12,
    };
    const a = await suite.client.chat.completions.create(req);
    const b = await suite.client.chat.completions.create(req);
    expect(a.choices.map((c) => c.message.content)).toEqual(b.choices.map((c) => c.message.content));
    expect(a.choices).toHaveLength(3);
    const stopped = await suite.client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0,
      stop: ['there'],
    });
    expect(stopped.choices[0]!.message.content).toBe('Hello ');
    expect(stopped.choices[0]!.finish_reason).toBe('stop');
  });

  it("reuses the KV cache of a repeated prompt and of the previous turn, reporting OpenAI's cached_tokens", async () => {
    const fresh = await startTinyServer({ weightsDir: suite.dir, version: 'v1' }); // nothing cached yet
    try {
      const c = new OpenAI({ baseURL: `${fresh.url}/v1`, apiKey: 'unused' });
      const messages = [{ role: 'user' as const, content: 'add 2 3' }];
      const ask = () =>
        c.chat.completions.create({ model: 'agl-tiny', messages, tools: [CALC_TOOL], temperature: 0, logprobs: true });
      const first = await ask();
      const second = await ask();
      expect(first.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
      // All but the last prompt token (its logits are needed) come from the cache, and the answer is bit-identical.
      expect(second.usage!.prompt_tokens_details!.cached_tokens).toBe(second.usage!.prompt_tokens - 1);
      const { tool_calls: calls1, ...rest1 } = first.choices[0]!.message;
      const { tool_calls: calls2, ...rest2 } = second.choices[0]!.message;
      expect(rest2).toEqual(rest1);
      const withoutId = (calls: typeof calls1) => calls!.map(({ id: _id, ...call }) => call); // call ids are fresh each time
      expect(withoutId(calls2)).toEqual(withoutId(calls1));
      expect(second.choices[0]!.logprobs).toEqual(first.choices[0]!.logprobs);
      // The agent's next turn repeats the prompt and the answer (a tool call): the answer's positions are cached too.
      const call = first.choices[0]!.message.tool_calls![0]!;
      const next = await c.chat.completions.create({
        model: 'agl-tiny',
        messages: [...messages, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '5' }],
        tools: [CALC_TOOL],
        temperature: 0,
      });
      expect(next.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
    } finally {
      await fresh.close();
    }
    // prefixCacheMiB: 0 turns it off; a bad size is refused by name.
    const off = await startTinyServer({ weightsDir: suite.dir, version: 'v1', prefixCacheMiB: 0 });
    try {
      const c = new OpenAI({ baseURL: `${off.url}/v1`, apiKey: 'unused' });
      const ask = () =>
        c.chat.completions.create({
          model: 'agl-tiny',
          messages: [{ role: 'user', content: 'hi' }],
          temperature: 0,
          max_tokens: 4,
        });
      await ask();
      expect((await ask()).usage!.prompt_tokens_details!.cached_tokens).toBe(0);
    } finally {
      await off.close();
    }
    await expect(startTinyServer({ weightsDir: suite.dir, version: 'v1', prefixCacheMiB: -1 })).rejects.toThrow(
      /prefixCacheMiB/,
    );
  });

  it('forces a tool call with tool_choice and refuses bad input with the field name', async () => {
    const forced = await suite.client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'add 2 3' }],
      tools: [CALC_TOOL],
      tool_choice: { type: 'function', function: { name: 'calc' } },
      temperature: 0,
    });
    expect(forced.choices[0]!.message.tool_calls?.[0]).toMatchObject({ function: { name: 'calc' } });
    const none = await suite.client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'add 2 3' }],
      tools: [CALC_TOOL],
      tool_choice: 'none',
      temperature: 0,
      max_tokens: 8,
    });
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();
    await expect(
      suite.client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 9 }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('temperature'),
    });
    const raw = await fetch(`${suite.server.url}/v1/chat/completions`, { method: 'POST', body: '{"messages": []}' });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({
      error_type: 'AGL_ValidationError',
      detail: expect.stringContaining('messages'),
    });
    expect((await fetch(`${suite.server.url}/v1/nope`)).status).toBe(404);
  });
});

describe('tiny server through LangChain ChatOpenAI', () => {
  const model = () =>
    new ChatOpenAI({
      model: 'agl-tiny',
      apiKey: 'unused',
      temperature: 0,
      configuration: { baseURL: `${suite.server.url}/v1` },
    });

  it('returns tool calls from invoke and from stream', async () => {
    const withTools = model().bindTools([CALC_TOOL]);
    const msg = await withTools.invoke('add 2 3');
    expect(msg.tool_calls).toEqual([expect.objectContaining({ name: 'calc', args: { e: '2+3' } })]);
    let acc: AIMessageChunk | undefined;
    for await (const chunk of await withTools.stream('add 2 3')) acc = acc ? acc.concat(chunk) : chunk;
    expect(acc!.tool_calls).toEqual([expect.objectContaining({ name: 'calc', args: { e: '2+3' } })]);
    const text = await model().invoke('hi');
    expect(text.content).toBe('Hello there! ✓');
    expect(text.response_metadata.model_name).toBe('agl-tiny@v1');
  });
});
