import type { AttemptedRollout, Span } from '@agl/core/schema';
import { type Gateway, startGateway } from '@agl/gateway';
import { MemoryStore } from '@agl/store';
import { type SampleResponse, type SamplingClient, ServiceClient, tokenizerForModel } from '@agl/tinker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTinyServer } from '../__fixtures__/tiny-server-suite';
import { CALC_TOOL, toolModelDir } from '../__fixtures__/tool-model';
import { renderChat } from '../chat/chat-template';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { tinyTokenizerId } from '../tokenizer/tokenizer-files';

const KEY = 'tml-tiny-gateway-key';
const BASE_MODEL = 'agl-tiny@v1';
const tok = new TinyTokenizer();
const suite = useTinyServer(toolModelDir, {
  version: 'v1',
  tinker: true,
  token: KEY,
  tinkerLongPollMs: 200,
  samplingSeed: 5,
});

/** A Tinker client whose sampling clients keep every `asample` result exactly as the gateway got it. */
function recordingService(url: string): { service: ServiceClient; samples: SampleResponse[] } {
  const service = new ServiceClient({ baseUrl: url, apiKey: KEY, heartbeatIntervalMs: 60_000 });
  const samples: SampleResponse[] = [];
  const create = service.createSamplingClient.bind(service);
  service.createSamplingClient = async (target) => {
    const client: SamplingClient = await create(target);
    const sample = client.sample.bind(client);
    client.sample = async (prompt, options) => {
      const result = await sample(prompt, options);
      samples.push(result);
      return result;
    };
    return client;
  };
  return { service, samples };
}

const scopedUrl = (gateway: Gateway, r: AttemptedRollout): string =>
  `${gateway.url}/rollout/${r.rolloutId}/attempt/${r.attempt.attemptId}/v1`;

async function spansOf(store: MemoryStore, rolloutId: string): Promise<Span[]> {
  return (await store.querySpans({ rolloutId, sortBy: 'sequence_id' })).items;
}

describe('the gateway in Tinker mode samples the embedded policy with its own tokenizer and chat template', () => {
  let store: MemoryStore;
  let gateway: Gateway;
  let recorded: ReturnType<typeof recordingService>;

  beforeAll(async () => {
    store = new MemoryStore();
    recorded = recordingService(suite.server.tinkerUrl!);
    gateway = await startGateway({
      store,
      port: 0,
      routeCacheTtlMs: 0,
      // hub: false — the tokenizer must come from the Tinker server itself.
      tinker: { service: recorded.service, baseModel: BASE_MODEL, hub: false },
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    await recorded?.service.close();
    await store?.close();
  });

  it(
    'a tool-calling chat through the openai client: prompt ids equal the server’s own chat route, the span holds asample’s ids and logprobs, the call is parsed',
    { timeout: 120_000 },
    async () => {
      const messages = [{ role: 'user' as const, content: 'add 2 3' }];
      const direct = new OpenAI({ baseURL: `${suite.server.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const own = await direct.chat.completions.create({
        model: BASE_MODEL,
        messages,
        tools: [CALC_TOOL],
        max_tokens: 1,
        // @ts-expect-error vLLM extension
        return_token_ids: true,
      });
      const ownPromptIds = (own as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
      expect(ownPromptIds).toEqual(renderChat({ tokenizer: tok, messages, tools: [CALC_TOOL] }).ids);

      const rollout = await store.startRollout({ input: {}, mode: 'train' });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
      const before = recorded.samples.length;
      const res = await client.chat.completions.create({
        model: 'whatever-the-agent-says',
        messages,
        tools: [CALC_TOOL],
        temperature: 0,
        max_tokens: 24,
      });
      expect(recorded.samples).toHaveLength(before + 1);
      const sequence = recorded.samples.at(-1)!.sequences[0]!;
      expect(tok.decode(sequence.tokens, { keepSpecial: true })).toBe('<|call|>calc{"e":"2+3"}<|/call|><|end|>');
      const choice = res.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toEqual([
        { id: expect.any(String), type: 'function', function: { name: 'calc', arguments: '{"e":"2+3"}' } },
      ]);
      expect(res.usage?.prompt_tokens).toBe(ownPromptIds.length);
      expect(res.usage?.completion_tokens).toBe(sequence.tokens.length);

      const [span] = await spansOf(store, rollout.rolloutId);
      expect(span!.attributes.prompt_token_ids).toEqual(ownPromptIds);
      expect(span!.attributes.response_token_ids).toEqual(sequence.tokens);
      const logprobs = JSON.parse(span!.attributes['logprobs.content'] as string) as { logprob: number }[];
      expect(logprobs.map((l) => l.logprob)).toEqual(sequence.logprobs);
      expect(span!.attributes['gen_ai.request.model']).toBe(BASE_MODEL);
    },
  );

  it(
    'streams a text answer; the follow-up turn with the tool result renders as the server renders it',
    { timeout: 120_000 },
    async () => {
      const messages = [
        { role: 'user' as const, content: 'add 2 3' },
        {
          role: 'assistant' as const,
          content: '',
          tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'calc', arguments: '{"e":"2+3"}' } }],
        },
        { role: 'tool' as const, tool_call_id: 'c1', content: '5' },
      ];
      const rollout = await store.startRollout({ input: {}, mode: 'train' });
      const client = new OpenAI({ baseURL: scopedUrl(gateway, rollout), apiKey: 'agent-key', maxRetries: 0 });
      const before = recorded.samples.length;
      const stream = await client.chat.completions.create({
        model: BASE_MODEL,
        messages,
        tools: [CALC_TOOL],
        temperature: 0,
        max_tokens: 24,
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      const sequence = recorded.samples.at(before)!.sequences[0]!;
      expect(text).toBe(tok.decode(sequence.tokens));
      expect(text).toBe('It is 5.');
      const [span] = await spansOf(store, rollout.rolloutId);
      expect(span!.attributes.prompt_token_ids).toEqual(
        renderChat({ tokenizer: tok, messages, tools: [CALC_TOOL] }).ids,
      );
      expect(span!.attributes.response_token_ids).toEqual(sequence.tokens);
    },
  );

  it(
    'get_info names the tokenizer (agl-tiny/<vocab>-<hash>) that tokenizerForModel fetches from the server',
    { timeout: 120_000 },
    async () => {
      const service = new ServiceClient({ baseUrl: suite.server.tinkerUrl!, apiKey: KEY, heartbeatIntervalMs: 60_000 });
      try {
        const training = await service.createLoraTrainingClient({ baseModel: BASE_MODEL, rank: 4 });
        const info = await training.getInfo();
        expect(info.model_data.tokenizer_id).toBe(tinyTokenizerId(tok));
        const chat = await tokenizerForModel(BASE_MODEL, {
          tokenizerId: info.model_data.tokenizer_id ?? null,
          hub: false,
          serverTokenizer: (ref) => service.serverTokenizerFiles(ref),
        });
        expect(chat.source).toBe(info.model_data.tokenizer_id);
        const messages = [
          { role: 'system', content: 'Be exact.' },
          { role: 'user', content: 'add 2 3' },
        ];
        expect(chat.renderPrompt(messages, { tools: [CALC_TOOL] }).ids).toEqual(
          renderChat({ tokenizer: tok, messages, tools: [CALC_TOOL] }).ids,
        );
        await expect(service.serverTokenizerFiles({ tokenizerId: 'agl-tiny/1-000000000000' })).resolves.toBeNull();
        await expect(
          tokenizerForModel('some-unknown-model', {
            hub: false,
            serverTokenizer: (ref) => service.serverTokenizerFiles({ tokenizerId: `${ref.model}/nope` }),
          }),
        ).rejects.toThrow(/No tokenizer is known for model "some-unknown-model"/);
      } finally {
        await service.close();
      }
    },
  );
});
