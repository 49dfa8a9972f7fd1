import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { TEST_CONFIG } from '../__fixtures__/tool-model';
import { useTinyServer } from '../__fixtures__/tiny-server-suite';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { tinyTokenizerId } from '../tokenizer/tokenizer-files';
import { protoForTests, PROTO_CONTENT_TYPE } from './tinker-proto';

const KEY = 'tml-test-key';
const suite = useTinyServer(() => mkdtemp(join(tmpdir(), 'tiny-tinker-')), {
  init: { config: TEST_CONFIG, seed: 3 },
  tinker: true,
  token: KEY,
  tinkerLongPollMs: 200,
  samplingSeed: 7,
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${suite.server.tinkerUrl}/api/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers },
    body: Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

async function json(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await post(path, body);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Polls a future as the SDK does (try_again → poll again). */
async function settle(future: Record<string, unknown>, accept = 'application/json'): Promise<Response> {
  for (;;) {
    const res = await post(
      'retrieve_future',
      { request_id: future.request_id, allow_metadata_only: false },
      { accept },
    );
    if (res.headers.get('content-type')?.includes(PROTO_CONTENT_TYPE)) return res;
    const body = (await res.clone().json()) as Record<string, unknown>;
    if (body.type !== 'try_again') return res;
  }
}

async function result(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await settle(await json(path, body));
  const out = (await res.json()) as Record<string, unknown>;
  expect(out.error, JSON.stringify(out)).toBeUndefined();
  return out;
}

describe('the embedded policy serves the Tinker API', () => {
  it('trains and samples through the SDK wire: JSON and protobuf bodies, futures, checkpoints, sampler paths', async () => {
    expect((await json('client/config', { sdk_version: '0.25.0' })).proto_compress_fwdbwd).toBe(false);
    const { session_id } = await json('create_session', {
      tags: [],
      user_metadata: {},
      sdk_version: '0.25.0',
      type: 'create_session',
    });
    expect(await json('session_heartbeat', { session_id, type: 'session_heartbeat' })).toEqual({
      type: 'session_heartbeat',
    });
    const caps = await fetch(`${suite.server.tinkerUrl}/api/v1/get_server_capabilities`, {
      headers: { 'x-api-key': KEY },
    });
    expect(
      ((await caps.json()) as { supported_models: Array<{ model_name: string }> }).supported_models[0]!.model_name,
    ).toBe('agl-tiny');

    const created = await result('create_model', {
      session_id,
      model_seq_id: 0,
      base_model: 'agl-tiny',
      lora_config: { rank: 8, train_unembed: true, train_mlp: true, train_attn: true },
      type: 'create_model',
    });
    const modelId = created.model_id as string;
    expect(modelId).toBe(`${session_id}:train:0`);
    const info = await json('get_info', { model_id: modelId, type: 'get_info' });
    expect(info.model_data).toMatchObject({
      arch: 'agl-tiny',
      model_name: 'agl-tiny',
      tokenizer_id: tinyTokenizerId(new TinyTokenizer()),
    });
    // AGL's extension serves that tokenizer (and its chat template) by id; an id it never named is a 404.
    const tokenizerId = (info.model_data as { tokenizer_id: string }).tokenizer_id;
    const byId = await fetch(
      `${suite.server.tinkerUrl}/api/v1/tokenizer?tokenizer_id=${encodeURIComponent(tokenizerId)}`,
      {
        headers: { 'x-api-key': KEY },
      },
    );
    expect(byId.status).toBe(200);
    expect(await byId.json()).toMatchObject({ tokenizer_id: tinyTokenizerId(new TinyTokenizer()), kind: 'agl-tiny' });
    const unknown = await fetch(`${suite.server.tinkerUrl}/api/v1/tokenizer?tokenizer_id=agl-tiny%2F1-0`, {
      headers: { 'x-api-key': KEY },
    });
    expect(unknown.status).toBe(404);
    const noRef = await fetch(`${suite.server.tinkerUrl}/api/v1/tokenizer`, { headers: { 'x-api-key': KEY } });
    expect(noRef.status).toBe(400);
    expect(await noRef.text()).toContain('model');

    // Sample the base model, then train on the samples with importance sampling (proto body, proto result).
    const { sampling_session_id } = await json('create_sampling_session', {
      session_id,
      sampling_session_seq_id: 0,
      base_model: 'agl-tiny',
      type: 'create_sampling_session',
    });
    const prompt = { chunks: [{ tokens: [256, 257, 104, 105], type: 'encoded_text' }] };
    const sampleReq = {
      sampling_session_id,
      seq_id: 0,
      num_samples: 3,
      prompt,
      sampling_params: { max_tokens: 6, temperature: 1, top_k: -1, top_p: 1 },
      type: 'sample',
    };
    const protoRes = await settle(await json('asample', sampleReq), PROTO_CONTENT_TYPE);
    expect(protoRes.headers.get('content-type')).toContain(PROTO_CONTENT_TYPE);
    const sample = protoForTests.decodeSampleResponse(Buffer.from(await protoRes.arrayBuffer()));
    expect(sample.sequences).toHaveLength(3);
    for (const s of sample.sequences) {
      expect(s.tokens.length).toBeGreaterThan(0);
      expect(s.logprobs).toHaveLength(s.tokens.length);
      expect(s.logprobs.every((x) => x <= 0)).toBe(true);
    }
    const data = sample.sequences.map((s, i) => {
      const ids = [...prompt.chunks[0]!.tokens, ...s.tokens];
      const P = prompt.chunks[0]!.tokens.length;
      const n = ids.length - 1;
      return {
        model_input: { chunks: [{ type: 'encoded_text', tokens: ids.slice(0, -1) }] },
        loss_fn_inputs: {
          target_tokens: { data: ids.slice(1), dtype: 'int64' as const, shape: [n] },
          logprobs: {
            data: [...new Array<number>(P - 1).fill(0), ...s.logprobs],
            dtype: 'float32' as const,
            shape: [n],
          },
          advantages: {
            data: [...new Array<number>(P - 1).fill(0), ...s.tokens.map(() => i - 1)],
            dtype: 'float32' as const,
            shape: [n],
          },
        },
      };
    });
    const fb = protoForTests.encodeForwardBackward({
      model_id: modelId,
      seq_id: 1,
      forward_backward_input: { data, loss_fn: 'importance_sampling' },
      forward_only: false,
    });
    const fbFuture = (await (
      await post('forward_backward', fb, { 'content-type': PROTO_CONTENT_TYPE })
    ).json()) as Record<string, unknown>;
    const fbRes = await settle(fbFuture, PROTO_CONTENT_TYPE);
    const fbOut = protoForTests.decodeForwardBackwardOutput(Buffer.from(await fbRes.arrayBuffer()));
    expect(fbOut.outputs).toHaveLength(3);
    // On-policy: the trainer's logprobs of the sampled tokens equal the sampler's.
    const P = prompt.chunks[0]!.tokens.length;
    sample.sequences.forEach((s, i) => {
      const lp = fbOut.outputs[i]!.logprobs!.slice(P - 1);
      s.logprobs.forEach((x, k) => expect(lp[k]).toBeCloseTo(x, 3));
    });
    expect(typeof fbOut.metrics['loss:sum']).toBe('number');

    const step = await result('optim_step', {
      model_id: modelId,
      seq_id: 2,
      adam_params: { learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 },
      type: 'optim_step',
    });
    expect((step.metrics as Record<string, number>).grad_norm).toBeGreaterThan(0);

    const saved = await result('save_weights', { model_id: modelId, path: '000001', seq_id: 3, type: 'save_weights' });
    expect(saved.path).toBe(`tinker://${modelId}/weights/000001`);
    const sampler = await result('save_weights_for_sampler', {
      model_id: modelId,
      path: '000001',
      seq_id: 4,
      type: 'save_weights_for_sampler',
    });
    const samplerPath = sampler.path as string;
    expect(samplerPath).toBe(`tinker://${modelId}/sampler_weights/000001`);

    // JSON forward (legacy forward route shape) of the same datums now differs from the sampling logprobs.
    const fwd = await result('forward_backward', {
      model_id: modelId,
      seq_id: 5,
      forward_backward_input: { data, loss_fn: 'importance_sampling' },
      forward_only: true,
    });
    const lp0 = (fwd.loss_fn_outputs as Array<{ logprobs: { data: number[] } }>)[0]!.logprobs.data.slice(P - 1);
    expect(lp0.some((x, k) => Math.abs(x - sample.sequences[0]!.logprobs[k]!) > 1e-4)).toBe(true);

    // The saved sampler path samples through a sampling session, through asample's model_path, and through the
    // OpenAI route when a request's model names it.
    const s2 = await json('create_sampling_session', {
      session_id,
      sampling_session_seq_id: 1,
      model_path: samplerPath,
      type: 'create_sampling_session',
    });
    const viaSession = await result('asample', {
      ...sampleReq,
      sampling_session_id: s2.sampling_session_id,
      sampling_params: { ...sampleReq.sampling_params, seed: 5 },
    });
    const viaPath = await result('asample', {
      ...sampleReq,
      sampling_session_id: undefined,
      model_path: samplerPath,
      sampling_params: { ...sampleReq.sampling_params, seed: 5 },
    });
    expect(viaPath.sequences).toEqual(viaSession.sequences);
    const openai = new OpenAI({ baseURL: `${suite.server.url}/v1`, apiKey: KEY });
    const completion = await openai.completions.create({ model: samplerPath, prompt: 'ab', max_tokens: 2 });
    expect(completion.model).toBe(samplerPath);
    const prefixed = await openai.completions.create({ model: `agl-tiny@${samplerPath}`, prompt: 'ab', max_tokens: 2 });
    expect(prefixed.model).toBe(samplerPath);

    // A new model resumes from the saved state with load_weights (optimizer included): same logprobs as the first.
    const m2 = (
      await result('create_model', {
        session_id,
        model_seq_id: 1,
        base_model: 'agl-tiny',
        lora_config: { rank: 8 },
        type: 'create_model',
      })
    ).model_id as string;
    await result('load_weights', { model_id: m2, path: saved.path, seq_id: 1, optimizer: true, type: 'load_weights' });
    const fwd2 = await result('forward_backward', {
      model_id: m2,
      seq_id: 2,
      forward_backward_input: { data, loss_fn: 'importance_sampling' },
      forward_only: true,
    });
    expect(fwd2.loss_fn_outputs).toEqual(fwd.loss_fn_outputs);
    const runs = await fetch(
      `${suite.server.tinkerUrl}/api/v1/training_runs/${encodeURIComponent(modelId)}/checkpoints`,
      { headers: { 'x-api-key': KEY } },
    );
    const ids = ((await runs.json()) as { checkpoints: Array<{ checkpoint_id: string }> }).checkpoints.map(
      (c) => c.checkpoint_id,
    );
    expect(ids).toEqual(['weights/000001', 'sampler_weights/000001']);
  });

  it('answers bad input with a 400 naming the field, a failed future with its category, 415, 404 and 401', async () => {
    const { session_id } = await json('create_session', { tags: [], sdk_version: '0.25.0', type: 'create_session' });
    const noKey = await fetch(`${suite.server.tinkerUrl}/api/v1/create_session`, { method: 'POST', body: '{}' });
    expect(noKey.status).toBe(401);
    const badModel = await post('create_model', {
      session_id,
      model_seq_id: 0,
      base_model: 'Qwen/Qwen3-8B',
      type: 'create_model',
    });
    expect(badModel.status).toBe(400);
    expect(((await badModel.json()) as { detail: string }).detail).toMatch(/base_model.*not served here.*agl-tiny/);
    const m = (
      await result('create_model', { session_id, model_seq_id: 1, base_model: 'agl-tiny', type: 'create_model' })
    ).model_id;
    const bad = await post('forward_backward', {
      model_id: m,
      seq_id: 1,
      forward_backward_input: { data: [], loss_fn: 'dro' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/loss_fn.*"dro" is not supported.*cross_entropy/);
    const encoded = await post('forward_backward', Buffer.from('x'), {
      'content-encoding': 'zstd',
      'content-type': PROTO_CONTENT_TYPE,
    });
    expect(encoded.status).toBe(415);
    const load = await post('load_weights', {
      model_id: m,
      path: 'tinker://x:train:0/weights/none',
      seq_id: 1,
      optimizer: false,
    });
    const failed = (await (await settle((await load.json()) as Record<string, unknown>)).json()) as Record<
      string,
      unknown
    >;
    expect(failed.category).toBe('user');
    expect(String(failed.error)).toMatch(/LoadWeights failed: No checkpoint at tinker:\/\/x:train:0\/weights\/none/);
    const unknown = await post('retrieve_future', { request_id: 'nope' });
    expect(unknown.status).toBe(404);
  });
});
