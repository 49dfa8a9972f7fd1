import type { AttemptedRollout, Span } from '@agl/core/schema';
import { GatewayTraceToTransitions } from '@agl/core/transitions';
import { MemoryStore } from '@agl/store';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import {
  type ChatTokenizer,
  type SampleResponse,
  type SamplingClient,
  ServiceClient,
  tokenizerForModel,
} from '@agl/tinker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, startGateway, startTinkerUpstream } from '../index';

const API_KEY = 'tml-stand-in-key';
const BASE_MODEL = 'Qwen/Qwen3-8B';
const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Current weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const messages = [
  { role: 'system' as const, content: 'You are a terse assistant.' },
  { role: 'user' as const, content: 'Weather in Paris?' },
];

/** A Tinker client whose sampling clients keep every `asample` result, exactly as the gateway got it. */
function recordingService(url: string): {
  service: ServiceClient;
  samples: SampleResponse[];
  rewrite: { next: ((r: SampleResponse) => SampleResponse) | null };
} {
  const service = new ServiceClient({ baseUrl: url, apiKey: API_KEY, heartbeatIntervalMs: 60_000 });
  const samples: SampleResponse[] = [];
  const rewrite: { next: ((r: SampleResponse) => SampleResponse) | null } = { next: null };
  const create = service.createSamplingClient.bind(service);
  service.createSamplingClient = async (target) => {
    const client: SamplingClient = await create(target);
    const sample = client.sample.bind(client);
    client.sample = async (prompt, options) => {
      let result = await sample(prompt, options);
      if (rewrite.next) result = rewrite.next(result);
      samples.push(result);
      return result;
    };
    return client;
  };
  return { service, samples, rewrite };
}

async function spansOf(store: MemoryStore, rolloutId: string): Promise<Span[]> {
  return (await store.querySpans({ rolloutId, sortBy: 'sequence_id' })).items;
}

const scopedUrl = (gateway: Gateway, r: AttemptedRollout): string =>
  `${gateway.url}/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/v1`;

describe.each(['tinker', 'json'] as const)(
  'gateway --tinker against the Tinker stand-in (%s wire), with the official openai client',
  (mode) => {
    let standIn: TinkerStandIn;
    let store: MemoryStore;
    let gateway: Gateway;
    let recorded: ReturnType<typeof recordingService>;
    let qwen: ChatTokenizer;

    beforeAll(async () => {
      standIn = await startTinkerStandIn({ apiKey: API_KEY, mode });
      store = new MemoryStore();
      recorded = recordingService(standIn.url);
      gateway = await startGateway({
        store,
        port: 0,
        routeCacheTtlMs: 0,
        tinker: { service: recorded.service, baseModel: BASE_MODEL },
      });
      qwen = await tokenizerForModel(BASE_MODEL);
    }, 60_000);

    afterAll(async () => {
      await gateway?.close();
      await recorded?.service.close();
      await standIn?.close();
      await store?.close();
    });

    /** The span's ids and logprobs must be `asample`'s, byte for byte, and the prompt the rendered template. */
    function expectExactIds(span: Span, sample: SampleResponse): void {
      const sequence = sample.sequences[0]!;
      const prompt = qwen.renderPrompt(messages, { tools }).ids;
      const sent = standIn.requestsTo('/api/v1/asample').at(-1)!.body as {
        prompt: { chunks: { tokens: number[] }[] };
        sampling_params: { stop: number[]; max_tokens: number };
      };
      expect(sent.prompt.chunks.flatMap((c) => c.tokens)).toEqual(prompt);
      expect(sent.sampling_params.stop).toEqual([151645]);
      expect(span.attributes.prompt_token_ids).toEqual(prompt);
      expect(span.attributes.response_token_ids).toEqual(sequence.tokens);
      const logprobs = JSON.parse(span.attributes['logprobs.content'] as string) as {
        token: string;
        logprob: number;
      }[];
      expect(logprobs.map((l) => l.logprob)).toEqual(sequence.logprobs);
      expect(logprobs.map((l) => l.token).join('')).toBe(qwen.decode(sequence.tokens));
      expect(span.attributes['gen_ai.request.model']).toBe(BASE_MODEL);
    }

    it('answers a non-streaming call by sampling the rendered prompt; the span holds the sampled ids', async () => {
      const rollout = await store.startRollout({ input: {}, mode: 'train' });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
      const before = recorded.samples.length;
      const res = await client.chat.completions.create({
        model: 'whatever-the-agent-says',
        messages,
        tools,
        max_tokens: 12,
      });
      expect(recorded.samples).toHaveLength(before + 1);
      const sample = recorded.samples.at(-1)!;
      const parsed = qwen.parseOutput(sample.sequences[0]!.tokens);
      expect(res.choices[0]!.message.content).toBe(parsed.message.content);
      expect(res.choices[0]!.finish_reason).toBe(sample.sequences[0]!.stop_reason === 'length' ? 'length' : 'stop');
      expect(res.usage?.completion_tokens).toBe(sample.sequences[0]!.tokens.length);
      expect((res as unknown as Record<string, unknown>).prompt_token_ids).toBeUndefined();
      const [span] = await spansOf(store, rollout.rolloutId);
      expectExactIds(span!, sample);
      const [transition] = new GatewayTraceToTransitions().transitions(await spansOf(store, rollout.rolloutId));
      expect(transition!.action.tokenIds).toEqual(sample.sequences[0]!.tokens);
      expect((transition!.action.logprobs as { logprob: number }[]).map((l) => l.logprob)).toEqual(
        sample.sequences[0]!.logprobs,
      );
    });

    it('streams in the OpenAI SSE format; the span holds the sampled ids', async () => {
      const rollout = await store.startRollout({ input: {}, mode: 'train' });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
      const stream = await client.chat.completions.create({
        messages,
        tools,
        max_tokens: 12,
        stream: true,
        model: 'm',
      });
      let text = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      const sample = recorded.samples.at(-1)!;
      expect(text).toBe(qwen.parseOutput(sample.sequences[0]!.tokens).message.content ?? '');
      expect(finish).not.toBeNull();
      const [span] = await spansOf(store, rollout.rolloutId);
      expectExactIds(span!, sample);
    });

    it('parses sampled tool calls back into OpenAI tool_calls, streaming and not', async () => {
      const toolText =
        '<think>\nLook it up.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>';
      const ids = qwen.encode(toolText);
      // The stand-in's bigram model samples noise; this replaces what asample returned with a tool call.
      recorded.rewrite.next = () => ({
        type: 'sample',
        sequences: [{ tokens: ids, logprobs: ids.map((_, i) => -0.25 - i / 64), stop_reason: 'stop' }],
      });
      try {
        const rollout = await store.startRollout({ input: {}, mode: 'train' });
        const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
        const res = await client.chat.completions.create({ messages, tools, model: 'm' });
        expect(res.choices[0]!.finish_reason).toBe('tool_calls');
        expect(res.choices[0]!.message.content).toBeNull();
        const call = res.choices[0]!.message.tool_calls![0]!;
        expect(call.type === 'function' && call.function).toEqual({
          name: 'get_weather',
          arguments: '{"city": "Paris"}',
        });
        const stream = await client.chat.completions.create({ messages, tools, model: 'm', stream: true });
        const streamed: { name?: string; arguments?: string }[] = [];
        let finish: string | null = null;
        for await (const chunk of stream) {
          for (const c of chunk.choices[0]?.delta.tool_calls ?? []) streamed.push({ ...c.function });
          finish = chunk.choices[0]?.finish_reason ?? finish;
        }
        expect(streamed).toEqual([{ name: 'get_weather', arguments: '{"city": "Paris"}' }]);
        expect(finish).toBe('tool_calls');
        const spans = await spansOf(store, rollout.rolloutId);
        expect(spans).toHaveLength(2);
        for (const span of spans) {
          expect(span.attributes.response_token_ids).toEqual(ids);
          const logprobs = JSON.parse(span.attributes['logprobs.content'] as string) as { logprob: number }[];
          expect(logprobs.map((l) => l.logprob)).toEqual(ids.map((_, i) => -0.25 - i / 64));
          expect(span.attributes['gen_ai.completion.0.tool_calls.0.name']).toBe('get_weather');
          expect(span.attributes['gen_ai.completion.0.content']).toBeUndefined();
          expect(span.attributes['gen_ai.completion.0.tool_calls.0.arguments']).toBe('{"city": "Paris"}');
        }
        // Sent back as history (reasoning_content included), the reply renders to exactly the text the model sampled.
        const history = [
          ...messages,
          res.choices[0]!.message,
          { role: 'tool' as const, tool_call_id: call.id, content: '18 C' },
        ];
        expect(qwen.renderText(history as never, { tools })).toContain(`<|im_start|>assistant\n${toolText}`);
      } finally {
        recorded.rewrite.next = null;
      }
    });

    it('answers Anthropic /v1/messages calls through Tinker too (translated to chat completions)', async () => {
      const rollout = await store.startRollout({ input: {}, mode: 'train' });
      const res = await fetch(`${scopedUrl(gateway, rollout)}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'm', max_tokens: 6, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { type: string }).type).toBe('message');
      const [span] = await spansOf(store, rollout.rolloutId);
      expect(span!.attributes.prompt_token_ids).toEqual(qwen.renderPrompt([{ role: 'user', content: 'Hi' }]).ids);
      expect(span!.attributes.response_token_ids).toEqual(recorded.samples.at(-1)!.sequences[0]!.tokens);
    });

    it('takes calls from its gateway only', async () => {
      const models = await fetch(`${gateway.url}/v1/models`);
      expect(((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual([BASE_MODEL]);
      const upstream = await startTinkerUpstream({ service: recorded.service, baseModel: BASE_MODEL, token: 'sekret' });
      try {
        expect((await fetch(`${upstream.baseUrl}/models`)).status).toBe(401);
        const ok = await fetch(`${upstream.baseUrl}/models`, { headers: { authorization: 'Bearer sekret' } });
        expect(ok.status).toBe(200);
      } finally {
        await upstream.close();
      }
    });

    it('answers bad sampling fields with a 400 naming the field', async () => {
      const rollout = await store.startRollout({ input: {}, mode: 'train' });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
      await expect(client.chat.completions.create({ messages, model: 'm', top_p: 7 })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('"top_p" must be a number in (0, 1]') as unknown,
      });
    });
    it('samples the tinker:// path an LLM resource on the Tinker base URL names', async () => {
      const training = await recorded.service.createLoraTrainingClient({ baseModel: BASE_MODEL, rank: 4 });
      const saved = await training.saveWeightsForSampler('step-1');
      const path = saved.path!;
      expect(path).toMatch(/^tinker:\/\/.+\/sampler_weights\/step-1$/);
      const resources = await store.addResources({
        main_llm: { resourceType: 'llm', endpoint: standIn.url, model: path, apiKey: null, samplingParameters: {} },
      });
      const rollout = await store.startRollout({ input: {}, mode: 'train', resourcesId: resources.resourcesId });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
      await client.chat.completions.create({ messages, tools, model: 'm', max_tokens: 4 });
      const sessions = standIn
        .requestsTo('/api/v1/create_sampling_session')
        .map((r) => r.body as Record<string, unknown>);
      expect(sessions.at(-1)).toMatchObject({ model_path: path });
      const [span] = await spansOf(store, rollout.rolloutId);
      expect(span!.attributes['gen_ai.request.model']).toBe(path);
      expect(span!.attributes.response_token_ids).toEqual(recorded.samples.at(-1)!.sequences[0]!.tokens);

      const elsewhere = await store.addResources({
        main_llm: {
          resourceType: 'llm',
          endpoint: 'http://127.0.0.1:9/v1',
          model: path,
          apiKey: null,
          samplingParameters: {},
        },
      });
      const other = await store.startRollout({ input: {}, mode: 'train', resourcesId: elsewhere.resourcesId });
      const refused = new OpenAI({ baseURL: scopedUrl(gateway, other), apiKey: 'agent-key', maxRetries: 0 });
      await expect(refused.chat.completions.create({ messages, model: 'm' })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining(`samples through the Tinker service at ${standIn.url}`) as unknown,
      });
    }, 60_000);
  },
);

describe('gateway without --tinker', () => {
  it('refuses an LLM resource naming a tinker:// sampler with the fix', async () => {
    const store = new MemoryStore();
    const gateway = await startGateway({ store, port: 0, backend: 'http://127.0.0.1:9/v1', routeCacheTtlMs: 0 });
    try {
      const resources = await store.addResources({
        main_llm: {
          resourceType: 'llm',
          endpoint: 'http://127.0.0.1:9/v1',
          model: 'tinker://run/sampler_weights/s',
          apiKey: null,
          samplingParameters: {},
        },
      });
      const rollout = await store.startRollout({ input: {}, mode: 'train', resourcesId: resources.resourcesId });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'k', maxRetries: 0 });
      await expect(client.chat.completions.create({ messages, model: 'm' })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('--tinker') as unknown,
      });
    } finally {
      await gateway.close();
      await store.close();
    }
  });
});
