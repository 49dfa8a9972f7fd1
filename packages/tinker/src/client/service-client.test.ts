import { afterEach, describe, expect, it, vi } from 'vitest';
import { UserError } from '@agl/core/errors';
import { startTinkerStandIn, type TinkerStandIn } from '@agl/testing';
import { modelInputFromTokens } from '../types/datum-builders';
import type { Datum } from '../types/tinker-types';
import { ServiceClient, type ServiceClientOptions } from './service-client';
import { TinkerApiError, TinkerRequestFailedError } from './tinker-errors';

const datum: Datum = {
  model_input: modelInputFromTokens([5, 6, 7, 8]),
  loss_fn_inputs: { target_tokens: [6, 7, 8, 9], weights: [0, 0, 1, 1] },
};

const servers: TinkerStandIn[] = [];
const clients: ServiceClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(
  standIn: Parameters<typeof startTinkerStandIn>[0] = {},
  client: Partial<ServiceClientOptions> = {},
) {
  const server = await startTinkerStandIn({ apiKey: 'tml-test', ...standIn });
  servers.push(server);
  const sleeps: number[] = [];
  const service = new ServiceClient({
    baseUrl: server.url,
    apiKey: 'tml-test',
    sleep: async (ms) => void sleeps.push(ms),
    ...client,
  });
  clients.push(service);
  return { server, service, sleeps };
}

describe('ServiceClient against the Tinker stand-in (SDK 0.25 wire)', () => {
  it('sends every call as SDK 0.25 does: config, session, create_model, protobuf forward_backward, JSON optim_step', async () => {
    const { server, service } = await setup();
    const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B', rank: 16 });
    const sessionId = await service.sessionId();
    expect(training.modelId).toBe(`${sessionId}:train:0`);

    expect(server.requestsTo('/api/v1/client/config')[0]!.body).toEqual({ sdk_version: '0.25.0' });
    expect(server.requestsTo('/api/v1/create_session')[0]!.body).toEqual({
      tags: [],
      user_metadata: {},
      sdk_version: '0.25.0',
      type: 'create_session',
    });
    expect(server.requestsTo('/api/v1/create_model')[0]!.body).toEqual({
      session_id: sessionId,
      model_seq_id: 0,
      base_model: 'Qwen/Qwen3-8B',
      lora_config: { rank: 16, train_unembed: true, train_mlp: true, train_attn: true },
      type: 'create_model',
    });
    for (const request of server.requests) expect(request.headers['x-api-key']).toBe('tml-test');

    const out = await training.forwardBackward([datum], 'cross_entropy');
    const fb = server.requestsTo('/api/v1/forward_backward');
    expect(fb).toHaveLength(1);
    expect(fb[0]!.contentType).toBe('application/x-protobuf');
    expect(fb[0]!.body).toMatchObject({
      model_id: training.modelId,
      seq_id: 1,
      loss_fn: 'cross_entropy',
      forward_only: false,
    });
    expect(out.loss_fn_outputs[0]!.logprobs!.data).toHaveLength(4);
    // Uniform over Qwen3's vocabulary before training: every logprob is -log(151936).
    for (const lp of out.loss_fn_outputs[0]!.logprobs!.data) expect(lp).toBeCloseTo(-Math.log(151_936), 4);
    expect(out.metrics['loss:sum']).toBeCloseTo(2 * Math.log(151_936), 3);

    await training.optimStep({ learningRate: 0.05 });
    expect(server.requestsTo('/api/v1/optim_step')[0]!.body).toEqual({
      adam_params: { learning_rate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 },
      model_id: training.modelId,
      seq_id: 2,
      type: 'optim_step',
    });
    const after = await training.forward([datum], 'cross_entropy');
    expect(after.metrics['loss:sum']).toBeLessThan(out.metrics['loss:sum']!);
    expect(server.requestsTo('/api/v1/forward_backward')[1]!.body).toMatchObject({ seq_id: 3, forward_only: true });
  });

  it('polls futures as the SDK: try_again, then 408, then complete_metadata, then the protobuf result', async () => {
    const { server, service } = await setup();
    const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B' });
    const before = server.requests.length;
    await training.forwardBackward([datum], 'cross_entropy');
    const polls = server.requests.slice(before).filter((r) => r.path === '/api/v1/retrieve_future');
    expect(polls.map((p) => p.status)).toEqual([200, 408, 200, 200]);
    expect(polls.map((p) => (p.body as { allow_metadata_only: boolean }).allow_metadata_only)).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(polls.map((p) => p.headers['x-tinker-request-iteration'])).toEqual(['0', '1', '2', '3']);
    for (const poll of polls) {
      expect(poll.headers['x-tinker-request-type']).toBe('ForwardBackward');
      expect(poll.headers.accept).toBe('application/x-protobuf');
    }
    expect(polls[0]!.headers['x-tinker-create-promise-roundtrip-time']).toBeDefined();
  });

  it('keeps seq_id order for calls made without awaiting, and samples with per-session seq_ids', async () => {
    const { server, service } = await setup();
    const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B' });
    const results = await Promise.all([
      training.forwardBackward([datum], 'cross_entropy'),
      training.optimStep({ learningRate: 0.1 }),
      training.forwardBackward([datum], 'cross_entropy'),
      training.optimStep({ learningRate: 0.1 }),
      training.saveWeightsForSampler('000002'),
    ]);
    const submitted = server.requests
      .filter((r) => /optim_step|forward_backward|save_weights_for_sampler/.test(r.path))
      .map((r) => (r.body as { seq_id: number }).seq_id);
    expect(submitted).toEqual([1, 2, 3, 4, 5]);
    const [first, , second] = results;
    expect(second.metrics['loss:sum']).toBeLessThan(first.metrics['loss:sum']!);
    const { path } = results[4] as { path: string };
    expect(path).toBe(`tinker://${training.modelId}/sampler_weights/000002`);

    const sampler = await service.createSamplingClient({ modelPath: path });
    expect(server.requestsTo('/api/v1/create_sampling_session')[0]!.body).toEqual({
      session_id: await service.sessionId(),
      sampling_session_seq_id: 0,
      model_path: path,
      type: 'create_sampling_session',
    });
    await sampler.sample([5, 6], { maxTokens: 3, seed: 7 });
    const sampled = await sampler.sample([5, 6], { maxTokens: 3, seed: 7, stop: [9] });
    const asample = server.requestsTo('/api/v1/asample');
    expect(asample[0]!.body).toEqual({
      sampling_session_id: sampler.samplingSessionId,
      seq_id: 0,
      num_samples: 1,
      prompt: { chunks: [{ type: 'encoded_text', tokens: [5, 6] }] },
      sampling_params: { max_tokens: 3, seed: 7, temperature: 1, top_k: -1, top_p: 1 },
      prompt_logprobs: false,
      topk_prompt_logprobs: 0,
      type: 'sample',
    });
    expect((asample[1]!.body as { seq_id: number }).seq_id).toBe(1);
    expect(asample[0]!.headers['x-tinker-sampling-backpressure']).toBe('1');
    expect(sampled.sequences[0]!.logprobs).toHaveLength(sampled.sequences[0]!.tokens.length);
  });

  it('retries 429 and 5xx submits with backoff, 5xx polls at once, and keeps one idempotency key', async () => {
    const { server, service, sleeps } = await setup();
    const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B' });
    server.failNext('/api/v1/optim_step', 429, 2, 'rate limited');
    await training.optimStep();
    const attempts = server.requestsTo('/api/v1/optim_step');
    expect(attempts.map((a) => a.status)).toEqual([429, 429, 200]);
    expect(new Set(attempts.map((a) => a.headers['x-idempotency-key'])).size).toBe(1);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]!).toBeGreaterThanOrEqual(375);
    expect(sleeps[0]!).toBeLessThanOrEqual(625);
    expect(sleeps[1]!).toBeGreaterThanOrEqual(750);

    server.failNext('/api/v1/retrieve_future', 503, 2);
    await training.forwardBackward([datum], 'cross_entropy');
    expect(sleeps).toHaveLength(2);
    server.failNext('/api/v1/retrieve_future', 429, 1);
    await training.optimStep();
    expect(sleeps[2]).toBe(1000);
  });

  it('retries connection errors on submit', async () => {
    let failures = 1;
    const { server, service } = await setup(
      {},
      {
        fetch: async (input, init) => {
          if (String(input).endsWith('/get_info') && failures-- > 0) throw new TypeError('fetch failed: ECONNRESET');
          return fetch(input, init);
        },
      },
    );
    const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B', rank: 4 });
    expect((await training.getInfo()).lora_rank).toBe(4);
    expect(server.requestsTo('/api/v1/get_info')).toHaveLength(1);
  });

  it('names the call and quotes the service on refusals and failed requests', async () => {
    const { server, service } = await setup();
    const refused = await service
      .createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B', rank: 0 })
      .catch((e: unknown) => e);
    expect(TinkerApiError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toBe(
      'Tinker create_model failed: HTTP 400: lora_config.rank must be a positive integer; got 0',
    );

    const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B' });
    server.failNextFuture('/api/v1/optim_step', 'optimizer state is corrupt');
    const failed = await training.optimStep().catch((e: unknown) => e);
    expect(TinkerRequestFailedError.isInstance(failed)).toBe(true);
    expect(failed).toMatchObject({ call: 'optim_step', category: 'user', detail: 'optimizer state is corrupt' });

    const badKey = new ServiceClient({ baseUrl: server.url, apiKey: 'tml-wrong' });
    clients.push(badKey);
    await expect(badKey.start()).rejects.toThrow(
      /Tinker client_config failed: HTTP 401: Invalid API key.*check TINKER_API_KEY/,
    );

    const badField = await service.http.request('create_session', '/api/v1/create_session', {
      body: { tags: [], user_metadata: {}, sdk_version: '0.25.0', type: 'create_session', colour: 'red' },
    });
    expect(badField.status).toBe(422);
    expect(service.http.apiError('create_session', badField).message).toContain(
      'colour: Extra inputs are not permitted',
    );
  });

  it('needs a key for hosted Tinker and reads TINKER_API_KEY / TINKER_BASE_URL', async () => {
    expect(() => new ServiceClient({ env: {} })).toThrow(UserError);
    expect(() => new ServiceClient({ env: {} })).toThrow(/TINKER_API_KEY/);
    const { server } = await setup();
    const fromEnv = new ServiceClient({ env: { TINKER_API_KEY: 'tml-test', TINKER_BASE_URL: server.url } });
    clients.push(fromEnv);
    expect(fromEnv.http.baseUrl).toBe(server.url);
    expect(await fromEnv.start()).toBeTruthy();
  });

  it('sends heartbeats on its timer until closed', async () => {
    const { server, service } = await setup({}, { heartbeatIntervalMs: 20 });
    const sessionId = await service.start();
    await vi.waitFor(() => expect(server.sessions.get(sessionId)!.heartbeats).toBeGreaterThanOrEqual(2), {
      timeout: 10_000,
      interval: 20,
    });
    await service.close();
    expect(server.requestsTo('/api/v1/session_heartbeat')[0]!.body).toEqual({
      session_id: sessionId,
      type: 'session_heartbeat',
    });
  });
});

describe('ServiceClient against the JSON-only stand-in (SkyRL-like)', () => {
  it('falls back to JSON forward_backward once, reads future_id, 408 pending and JSON results', async () => {
    const { server, service } = await setup({ mode: 'json' });
    const training = await service.createLoraTrainingClient({ baseModel: 'agl/bigram-512' });
    expect(training.modelId).toMatch(/^model_[0-9a-f]{8}$/);
    const first = await training.forwardBackward([datum], 'cross_entropy');
    await training.forward([datum], 'cross_entropy');
    const fb = server.requestsTo('/api/v1/forward_backward');
    expect(fb.map((r) => [r.contentType, r.status])).toEqual([
      ['application/x-protobuf', 415],
      ['application/json', 200],
    ]);
    expect(fb[1]!.body).toEqual({
      forward_backward_input: {
        data: [
          {
            model_input: { chunks: [{ type: 'encoded_text', tokens: [5, 6, 7, 8] }] },
            loss_fn_inputs: {
              target_tokens: { data: [6, 7, 8, 9], dtype: 'int64', shape: [4] },
              weights: { data: [0, 0, 1, 1], dtype: 'float32', shape: [4] },
            },
          },
        ],
        loss_fn: 'cross_entropy',
      },
      model_id: training.modelId,
      seq_id: 1,
    });
    expect(server.requestsTo('/api/v1/forward')[0]!.body).toMatchObject({
      seq_id: 2,
      forward_input: { loss_fn: 'cross_entropy' },
    });
    expect(first.metrics['loss:sum']).toBeCloseTo(2 * Math.log(512), 4);
    const polls = server.requestsTo('/api/v1/retrieve_future');
    expect(polls.some((p) => p.status === 408)).toBe(true);

    server.failNextFuture('/api/v1/optim_step', 'Adam exploded');
    const failed = await training.optimStep().catch((e: unknown) => e);
    expect(TinkerRequestFailedError.isInstance(failed)).toBe(true);
    expect((failed as Error).message).toContain('Adam exploded');
  });
});
