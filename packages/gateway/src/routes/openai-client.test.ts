import { GatewayTraceToTransitions } from '@agl/core/transitions';
import { toyChatPromptIds, toyTokenize } from '@agl/testing';
import OpenAI from 'openai';
import { beforeAll, expect, it } from 'vitest';
import { BACKEND_KEY, describeSpanWriteModes, lastBackendBody, spansOf } from '../__fixtures__/gateway-fixture';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { input: { type: 'string' } } },
  },
};

type Raw = Record<string, unknown> & { choices: Record<string, unknown>[] };

describeSpanWriteModes('gateway with the openai npm client (spanWrite %s)', (fx) => {
  let client: OpenAI;

  beforeAll(() => {
    client = new OpenAI({ baseURL: fx().baseURL, apiKey: 'client-key-never-forwarded', maxRetries: 0 });
  });

  /** An OpenAI client scoped to the rollout's attempt through the gateway. */
  const clientOf = (
    r: { rolloutId: string; attempt: { attemptId: string } },
    options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {},
  ): OpenAI =>
    new OpenAI({
      baseURL: `${fx().gateway.url}/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/v1`,
      apiKey: 'x',
      maxRetries: 0,
      ...options,
    });

  it('forwards a training chat call, strips the extras it added, and stores a span with the backend token ids', async () => {
    const messages = [{ role: 'user' as const, content: 'What is 6 * 7?' }];
    const res = (await client.chat.completions.create({
      model: 'agent-model',
      messages,
      temperature: 0.3,
    })) as unknown as Raw;
    expect((res.choices[0]!.message as { content: string }).content).toBe('42');
    expect(res.prompt_token_ids).toBeUndefined();
    expect(res.choices[0]!.token_ids).toBeUndefined();
    expect(res.choices[0]!.logprobs).toBeNull();

    const sent = fx().llm.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${BACKEND_KEY}`);
    expect(sent.body).toMatchObject({ return_token_ids: true, logprobs: true, model: 'agent-model' });

    const spans = await spansOf(fx().store, fx().rollout.rolloutId);
    const span = spans.at(-1)!;
    expect(span.name).toBe('openai.chat.completion');
    expect(span.attributes).toMatchObject({
      'agl.gateway': true,
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'agent-model',
      'gen_ai.request.temperature': 0.3,
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'What is 6 * 7?',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': '42',
      'gen_ai.completion.0.finish_reason': 'stop',
      'gen_ai.response.id': res.id,
      prompt_token_ids: toyChatPromptIds(messages),
      response_token_ids: toyTokenize('42'),
    });
    const logprobs = JSON.parse(span.attributes['logprobs.content'] as string) as {
      token: string;
      logprob: number;
    }[];
    expect(logprobs.map((l) => l.token)).toEqual(['42']);
    expect(logprobs[0]!.logprob).toBeLessThan(0);
    expect(JSON.stringify(span)).not.toContain(BACKEND_KEY);
    expect(JSON.stringify(span)).not.toContain('client-key-never-forwarded');
  });

  it('keeps token ids and logprobs when the client asked for them', async () => {
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'hello' }],
      logprobs: true,
      return_token_ids: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const res = (await client.chat.completions.create(body)) as unknown as Raw;
    expect(res.prompt_token_ids).toEqual(toyChatPromptIds([{ role: 'user', content: 'hello' }]));
    expect(res.choices[0]!.token_ids).toEqual(toyTokenize('Echo: hello'));
    const content = (res.choices[0]!.logprobs as { content: unknown[] }).content;
    expect(content.length).toBeGreaterThan(0);
    // The client got the backend's bytes unchanged; the span holds the same logprobs list and token ids.
    const span = (await spansOf(fx().store, fx().rollout.rolloutId)).at(-1)!;
    expect(JSON.parse(span.attributes['logprobs.content'] as string)).toEqual(content);
    expect(span.attributes.response_token_ids).toEqual(res.choices[0]!.token_ids);
  });

  it('streams with tool calls; the assembled span carries the tool call and all streamed token ids', async () => {
    const before = (await spansOf(fx().store, fx().rollout.rolloutId)).length;
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Paris' }],
      tools: [weatherTool],
      stream: true,
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.some((c) => 'usage' in c && c.usage)).toBe(false);
    expect(chunks.every((c) => !('token_ids' in (c.choices[0] ?? {})))).toBe(true);
    const args = chunks
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((t) => t.function?.arguments ?? '')
      .join('');
    expect(JSON.parse(args)).toEqual({ input: 'Paris' });
    expect(lastBackendBody(fx().llm)).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      return_token_ids: true,
    });

    const spans = await spansOf(fx().store, fx().rollout.rolloutId);
    expect(spans).toHaveLength(before + 1);
    const span = spans.at(-1)!;
    expect(span.attributes).toMatchObject({
      'gen_ai.request.streaming': true,
      'gen_ai.completion.0.finish_reason': 'tool_calls',
      'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"input":"Paris"}',
      'gen_ai.request.functions.0.name': 'get_weather',
      prompt_token_ids: toyChatPromptIds([{ role: 'user', content: 'Paris' }]),
    });
    expect(span.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
  });

  it('passes streamed token ids through when asked, and the span holds exactly the ids the backend streamed', async () => {
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'Paris' }],
      tools: [weatherTool],
      stream: true,
      return_token_ids: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming;
    const seen: number[] = [];
    let promptIds: unknown;
    for await (const chunk of await client.chat.completions.create(body)) {
      const raw = chunk as unknown as { prompt_token_ids?: number[]; choices: { token_ids?: number[] }[] };
      if (raw.prompt_token_ids) promptIds = raw.prompt_token_ids;
      seen.push(...(raw.choices[0]?.token_ids ?? []));
    }
    expect(seen.length).toBeGreaterThan(0);
    const span = (await spansOf(fx().store, fx().rollout.rolloutId)).at(-1)!;
    expect(span.attributes.response_token_ids).toEqual(seen);
    expect(span.attributes.prompt_token_ids).toEqual(promptIds);
  });

  it('runs a tool loop whose transitions carry exactly the backend token ids', async () => {
    const fresh = await fx().store.startRollout({ input: { q: 'tools' }, mode: 'train' });
    const scoped = new OpenAI({
      baseURL: `${fx().gateway.url}/rollout/${fresh.rolloutId}/attempt/${fresh.attempt.attemptId}/v1`,
      apiKey: 'x',
      maxRetries: 0,
    });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris' }];
    const first = await scoped.chat.completions.create({ model: 'm', messages, tools: [weatherTool] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '20 + 1' });
    const stream = await scoped.chat.completions.create({ model: 'm', messages, tools: [weatherTool], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('21');

    const transitions = new GatewayTraceToTransitions().transitions(await spansOf(fx().store, fresh.rolloutId));
    expect(transitions).toHaveLength(2);
    // What the backend produced for each call, recomputed from the test server's own tokenizer.
    expect(transitions[0]!.state.tokenIds).toEqual(toyChatPromptIds([{ role: 'user', content: 'Paris' }]));
    expect(transitions[0]!.action.tokenIds).toEqual(
      toyTokenize(`<tool_call>get_weather${call.type === 'function' ? call.function.arguments : ''}</tool_call>`),
    );
    expect(transitions[1]!.action.tokenIds).toEqual(toyTokenize('21'));
    expect(transitions[1]!.state.tokenIds!.length).toBeGreaterThan(transitions[0]!.state.tokenIds!.length);
    expect(transitions[1]!.action.logprobs?.length).toBe(1);
  });

  it('serves completions, responses and models', async () => {
    const completion = await client.completions.create({ model: 'm', prompt: '2 + 2' });
    expect(completion.choices[0]!.text).toBe('4');
    const span = (await spansOf(fx().store, fx().rollout.rolloutId)).at(-1)!;
    expect(span.name).toBe('openai.completion');
    expect(span.attributes).toMatchObject({
      prompt_token_ids: toyTokenize('2 + 2'),
      response_token_ids: toyTokenize('4'),
    });
    expect(lastBackendBody(fx().llm)).toMatchObject({ return_token_ids: true, logprobs: 1 });
    expect((completion.choices[0] as unknown as Record<string, unknown>).token_ids).toBeUndefined();

    const response = await client.responses.create({ model: 'm', input: 'What is 3 + 4?' });
    expect(response.output_text).toBe('7');
    const streamed = await client.responses.create({ model: 'm', input: 'What is 3 + 5?', stream: true });
    let done: string | null = null;
    for await (const event of streamed) {
      if (event.type === 'response.completed')
        done = event.response.output
          .flatMap((o) => (o.type === 'message' ? o.content : []))
          .map((c) => (c.type === 'output_text' ? c.text : ''))
          .join('');
    }
    expect(done).toBe('8');
    const last = (await spansOf(fx().store, fx().rollout.rolloutId)).slice(-2);
    expect(last.map((s) => s.attributes['gen_ai.completion.0.content'])).toEqual(['7', '8']);

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['test-model']);
  });

  it('scopes plain /v1 calls by x-rollout-id / x-attempt-id and leaves unscoped calls unrecorded', async () => {
    const other = await fx().store.startRollout({ input: null, mode: 'val' });
    const plain = new OpenAI({
      baseURL: `${fx().gateway.url}/v1`,
      apiKey: 'x',
      maxRetries: 0,
      defaultHeaders: { 'x-rollout-id': other.rolloutId, 'x-attempt-id': other.attempt.attemptId },
    });
    const res = await plain.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]!.message.content).toBe('Echo: hi');
    expect(lastBackendBody(fx().llm).return_token_ids).toBeUndefined();
    const spans = await spansOf(fx().store, other.rolloutId);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes.prompt_token_ids).toBeUndefined();

    const unscoped = new OpenAI({ baseURL: `${fx().gateway.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const stats = await fx().store.statistics();
    await unscoped.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect((await fx().store.statistics()).totalSpans).toBe(stats.totalSpans);
  });

  it('takes the sequence id before answering, so a reward emitted right after the call is matched to it', async () => {
    const r = await fx().store.startRollout({ input: null, mode: 'train' });
    const scoped = clientOf(r);
    await scoped.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '1 + 1' }] });
    const sequenceId = await fx().store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId);
    await fx().store.addSpan({
      rolloutId: r.rolloutId,
      attemptId: r.attempt.attemptId,
      sequenceId,
      traceId: 'e'.repeat(32),
      spanId: 'f'.repeat(16),
      parentId: null,
      name: 'agentlightning.annotation',
      attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': 1 },
      startTime: 1,
      endTime: 1,
    });
    const [transition] = new GatewayTraceToTransitions().transitions(await spansOf(fx().store, r.rolloutId));
    expect(transition!.reward).toBe(1);
    expect(transition!.action.tokenIds).toEqual(toyTokenize('2'));
  });

  it('joins the client’s trace: traceparent becomes the span’s trace id and parent', async () => {
    const r = await fx().store.startRollout({ input: null, mode: 'train' });
    const traced = clientOf(r, { defaultHeaders: { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` } });
    const res = await traced.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const span = (await spansOf(fx().store, r.rolloutId))[0]!;
    expect(span).toMatchObject({
      traceId: 'ab'.repeat(16),
      parentId: 'cd'.repeat(8),
      attributes: { 'gen_ai.response.id': res.id },
    });
    expect(fx().llm.requests.at(-1)!.headers.traceparent).toBe(`00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`);
  });

  it('serves the AGL 1.0 path with the mode from the URL', async () => {
    const r = await fx().store.startRollout({ input: null, mode: 'val' });
    const agl10 = new OpenAI({
      baseURL: `${fx().gateway.url}/proxy/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/mode/train/openai/v1`,
      apiKey: 'x',
      maxRetries: 0,
    });
    await agl10.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '1 + 1' }] });
    const span = (await spansOf(fx().store, r.rolloutId))[0]!;
    expect(span.attributes.response_token_ids).toEqual(toyTokenize('2'));
  });
});
