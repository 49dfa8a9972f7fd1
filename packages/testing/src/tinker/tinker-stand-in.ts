import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '@agl/core';
import {
  PROTOBUF_CONTENT_TYPE,
  decodeForwardBackwardRequest,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
  modelInputTokens,
  type Datum,
  type ForwardBackwardOutput,
  type SampleResponse,
} from '@agl/tinker';
import { BigramModel, type BigramSnapshot } from './bigram-model';
import { checkSchema, TINKER_REQUEST_SCHEMAS } from './tinker-wire-schemas';
import { SKYRL_LOSSES, TINKER_LOSSES, WireRefusal, checkBatch, runBatch, runSample } from './tinker-training-ops';

/** A base model the stand-in serves: its vocabulary size (the bigram table's) and tokenizer id. */
export interface StandInBaseModel {
  vocabSize: number;
  tokenizerId?: string;
  arch?: string;
}

/** The base models served unless options say otherwise. */
export const STAND_IN_BASE_MODELS: Record<string, StandInBaseModel> = {
  'Qwen/Qwen3-8B': { vocabSize: 151_936, tokenizerId: 'Qwen/Qwen3-8B', arch: 'qwen3' },
  'Qwen/Qwen3-4B-Instruct-2507': { vocabSize: 151_936, tokenizerId: 'Qwen/Qwen3-4B-Instruct-2507', arch: 'qwen3' },
  'meta-llama/Llama-3.1-8B-Instruct': {
    vocabSize: 128_256,
    tokenizerId: 'meta-llama/Llama-3.1-8B-Instruct',
    arch: 'llama',
  },
  'agl/bigram-512': { vocabSize: 512, arch: 'bigram' },
};

/** How a pending future answers one poll: `try_again` (200) or HTTP 408. */
export type PendingAnswer = 'try_again' | '408';

/** Options of {@link startTinkerStandIn}. */
export interface TinkerStandInOptions {
  /**
   * `tinker` (default): hosted Tinker as SDK 0.25 expects it (protobuf and JSON, `try_again` futures,
   * `{"error","category"}` failures, `<session>:train:<n>` ids). `json`: a SkyRL-like server that speaks only JSON
   * (HTTP 408 while pending, `future_id`, HTTP 400 failures, `model_<hex>` ids, 415 for protobuf bodies).
   */
  mode?: 'tinker' | 'json';
  /** The key required in `X-API-Key`; absent: any. */
  apiKey?: string;
  /** How each future answers its first polls before its result. Default `['try_again', '408']` (json: `['408']`). */
  pending?: PendingAnswer[];
  /** Answer `complete_metadata` once for protobuf results polled with `allow_metadata_only: true`. Default true. */
  metadataFirst?: boolean;
  /** Base models served. Default {@link STAND_IN_BASE_MODELS}. */
  baseModels?: Record<string, StandInBaseModel>;
  /** Seed of the sampler's random numbers. Default 1. */
  seed?: number;
}

/** One recorded request. */
export interface RecordedTinkerRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  contentType: string;
  /** The JSON body, or the decoded protobuf ForwardBackwardRequest. */
  body: unknown;
  /** The answer's status. */
  status: number;
}

/** A training model on the stand-in. */
export interface StandInModel {
  modelId: string;
  sessionId: string;
  baseModel: string;
  loraRank: number;
  model: BigramModel;
  nextSeq: number;
  waiting: Map<number, () => void>;
}

/** A saved checkpoint. */
export interface StandInCheckpoint {
  path: string;
  kind: 'weights' | 'sampler_weights';
  baseModel: string;
  loraRank: number;
  snapshot: BigramSnapshot;
}

/** A running stand-in. */
export interface TinkerStandIn {
  /** `http://127.0.0.1:<port>`: the base URL (TINKER_BASE_URL). */
  url: string;
  mode: 'tinker' | 'json';
  readonly requests: RecordedTinkerRequest[];
  readonly sessions: Map<string, { heartbeats: number; tags: string[] }>;
  readonly models: Map<string, StandInModel>;
  readonly checkpoints: Map<string, StandInCheckpoint>;
  /** Requests to `path` (e.g. `/api/v1/optim_step`), answered `status` with `{"detail"}` the next `times` times. */
  failNext(path: string, status: number, times?: number, detail?: string): void;
  /** The next future submitted to `path` fails while it runs with `detail` (`{"error","category"}`; json: HTTP 400). */
  failNextFuture(path: string, detail: string): void;
  /** The recorded requests to one route. */
  requestsTo(path: string): RecordedTinkerRequest[];
  close(): Promise<void>;
}

interface Future {
  pending: PendingAnswer[];
  metadataSent: boolean;
  kind: 'json' | 'sample' | 'forward_backward';
  result?: unknown;
  error?: string;
  done: boolean;
}

/**
 * Starts a Tinker stand-in on 127.0.0.1 (port 0) that follows SDK 0.25.0's wire field by field: every request body is
 * checked against the SDK's request models (unknown or mistyped fields → 422 `detail`), training requests run in
 * `seq_id` order per model, futures answer `try_again` / 408 first, and a bigram model computes real logprobs, losses,
 * gradients and Adam steps and samples from the trained table.
 */
export async function startTinkerStandIn(options: TinkerStandInOptions = {}): Promise<TinkerStandIn> {
  const mode = options.mode ?? 'tinker';
  const json = mode === 'json';
  const pendingScript = options.pending ?? (json ? ['408'] : ['try_again', '408']);
  const baseModels = options.baseModels ?? STAND_IN_BASE_MODELS;
  const random = seededRandom(options.seed ?? 1);
  const requests: RecordedTinkerRequest[] = [];
  const sessions = new Map<string, { heartbeats: number; tags: string[]; models: number; samplers: number }>();
  const models = new Map<string, StandInModel>();
  const checkpoints = new Map<string, StandInCheckpoint>();
  const samplers = new Map<string, { model: BigramModel; baseModel: string }>();
  const futures = new Map<string, Future>();
  const faults = new Map<string, { status: number; times: number; detail: string }>();
  const futureFaults = new Map<string, string>();
  let currentPath = '';
  let futureCounter = 0;
  const hex = () => randomBytes(4).toString('hex');

  const base = (name: string): StandInBaseModel => {
    const found = baseModels[name];
    if (!found)
      throw new WireRefusal(400, `Unknown base_model "${name}"; supported: ${Object.keys(baseModels).join(', ')}`);
    return found;
  };
  const modelOf = (id: unknown): StandInModel => {
    const found = models.get(String(id));
    if (!found) throw new WireRefusal(404, `Model '${String(id)}' not found`);
    return found;
  };

  /** Queues `run` behind earlier seq_ids of the model; its future settles when it runs. */
  function submit(model: StandInModel | undefined, seqId: unknown, kind: Future['kind'], run: () => unknown) {
    const id = json ? String(++futureCounter) : `${randomUUID()}`;
    const future: Future = { pending: [...pendingScript], metadataSent: false, kind, done: false };
    futures.set(id, future);
    const injected = futureFaults.get(currentPath);
    futureFaults.delete(currentPath);
    const exec = () => {
      try {
        if (injected !== undefined) throw new Error(injected);
        future.result = run();
      } catch (error) {
        future.error = (error as Error).message;
      }
      future.done = true;
    };
    if (!model || typeof seqId !== 'number') exec();
    else {
      if (seqId < model.nextSeq || model.waiting.has(seqId)) {
        futures.delete(id);
        throw new WireRefusal(409, 'Training request sequence number was reused');
      }
      model.waiting.set(seqId, exec);
      while (model.waiting.has(model.nextSeq)) {
        const next = model.waiting.get(model.nextSeq)!;
        model.waiting.delete(model.nextSeq);
        model.nextSeq++;
        next();
      }
    }
    return json
      ? { future_id: id, status: 'pending', request_id: id }
      : { request_id: id, ...(model ? { model_id: model.modelId } : {}) };
  }

  function saveCheckpoint(m: StandInModel, kind: StandInCheckpoint['kind'], name: string, overwrite: boolean) {
    if (!/^[A-Za-z0-9._-]+$/.test(name))
      throw new WireRefusal(400, `Invalid checkpoint name "${name}": use letters, digits, . _ -`);
    const path = `tinker://${m.modelId}/${kind}/${name}`;
    if (checkpoints.has(path) && !overwrite) {
      throw new WireRefusal(409, `Checkpoint '${name}' already exists for model '${m.modelId}'`);
    }
    return path;
  }

  function openSampler(sessionId: string, target: { model_path?: unknown; base_model?: unknown }): string {
    const session = sessions.get(sessionId);
    if (!session) throw new WireRefusal(404, 'Session not found');
    if ((target.model_path == null) === (target.base_model == null)) {
      throw new WireRefusal(400, 'Exactly one of base_model or model_path must be provided');
    }
    let sampler;
    if (target.model_path != null) {
      const ckpt = checkpoints.get(String(target.model_path));
      if (!ckpt || ckpt.kind !== 'sampler_weights') {
        throw new WireRefusal(
          400,
          `model_path must name saved sampler weights (tinker://<model_id>/sampler_weights/<name>); got ${String(target.model_path)}`,
        );
      }
      sampler = {
        model: BigramModel.fromSnapshot(base(ckpt.baseModel).vocabSize, ckpt.snapshot),
        baseModel: ckpt.baseModel,
      };
    } else {
      const name = String(target.base_model);
      sampler = { model: new BigramModel(base(name).vocabSize), baseModel: name };
    }
    const id = json ? `sampling_${hex()}` : `${sessionId}:sample:${session.samplers++}`;
    samplers.set(id, sampler);
    return id;
  }

  function fwdbwd(
    body: {
      model_id: string;
      seq_id?: number;
      input: { data: Datum[]; loss_fn: string; loss_fn_config?: Record<string, number> | null };
    },
    forwardOnly: boolean,
  ) {
    const m = modelOf(body.model_id);
    const batch = checkBatch(
      body.input.data,
      body.input.loss_fn,
      body.input.loss_fn_config,
      m.model.vocabSize,
      json ? SKYRL_LOSSES : TINKER_LOSSES,
      json,
    );
    return submit(m, body.seq_id, 'forward_backward', () => runBatch(m.model, batch, forwardOnly));
  }

  const routes: Record<string, (body: Record<string, any>) => unknown> = {
    '/api/v1/client/config': () =>
      json
        ? { pjwt_auth_enabled: false }
        : {
            pjwt_auth_enabled: false,
            parallel_fwdbwd_chunks: true,
            proto_compress_fwdbwd: false,
            fwdbwd_max_chunk_len: 1024,
            fwdbwd_max_chunk_bytes_count: 5_000_000,
          },
    '/api/v1/client/dynamic_config': () => {
      if (json) throw new WireRefusal(404, 'Not Found');
      return { refresh_interval_sec: 300 };
    },
    '/api/v1/create_session': (b) => {
      const id = json ? `session_${hex()}` : randomUUID();
      sessions.set(id, { heartbeats: 0, tags: b.tags, models: 0, samplers: 0 });
      return { type: 'create_session', session_id: id };
    },
    '/api/v1/session_heartbeat': (b) => {
      const session = sessions.get(b.session_id);
      if (!session) throw new WireRefusal(404, 'Session not found');
      session.heartbeats++;
      return { type: 'session_heartbeat' };
    },
    '/api/v1/create_model': (b) => {
      const session = sessions.get(b.session_id);
      if (!session) throw new WireRefusal(404, 'Session not found');
      base(b.base_model);
      const rank = b.lora_config?.rank ?? 32;
      if (rank < 1) throw new WireRefusal(400, `lora_config.rank must be a positive integer; got ${rank}`);
      const modelId = json ? `model_${hex()}` : `${b.session_id}:train:${b.model_seq_id}`;
      if (models.has(modelId))
        throw new WireRefusal(409, `model_seq_id ${b.model_seq_id} was already used in this session`);
      const m: StandInModel = {
        modelId,
        sessionId: b.session_id,
        baseModel: b.base_model,
        loraRank: rank,
        model: new BigramModel(base(b.base_model).vocabSize),
        nextSeq: 1,
        waiting: new Map(),
      };
      models.set(modelId, m);
      session.models++;
      const result = json
        ? {
            model_id: modelId,
            base_model: b.base_model,
            lora_config: b.lora_config,
            status: 'ready',
            type: 'create_model',
          }
        : { model_id: modelId, type: 'create_model' };
      return submit(undefined, undefined, 'json', () => result);
    },
    '/api/v1/get_info': (b) => {
      const m = modelOf(b.model_id);
      const info = base(m.baseModel);
      return json
        ? {
            model_id: m.modelId,
            status: 'ready',
            model_data: { base_model: m.baseModel, lora_config: { rank: m.loraRank }, model_name: m.baseModel },
          }
        : {
            type: 'get_info',
            model_id: m.modelId,
            model_data: { arch: info.arch ?? null, model_name: m.baseModel, tokenizer_id: info.tokenizerId ?? null },
            is_lora: true,
            lora_rank: m.loraRank,
            model_name: m.baseModel,
          };
    },
    '/api/v1/forward_backward': (b) =>
      fwdbwd({ model_id: b.model_id, seq_id: b.seq_id, input: b.forward_backward_input }, Boolean(b.forward_only)),
    '/api/v1/forward': (b) => fwdbwd({ model_id: b.model_id, seq_id: b.seq_id, input: b.forward_input }, true),
    '/api/v1/optim_step': (b) => {
      const m = modelOf(b.model_id);
      const adam = {
        learning_rate: 1e-4,
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-12,
        weight_decay: 0,
        grad_clip_norm: 0,
        ...b.adam_params,
      };
      if (!(adam.learning_rate >= 0))
        throw new WireRefusal(400, `adam_params.learning_rate must be >= 0; got ${adam.learning_rate}`);
      return submit(m, b.seq_id, 'json', () => {
        const { gradNorm, updated } = m.model.adamStep(adam);
        return { type: 'optim_step', metrics: { 'grad_norm:mean': gradNorm, 'updated_params:sum': updated } };
      });
    },
    '/api/v1/save_weights': (b) => {
      const m = modelOf(b.model_id);
      const path = saveCheckpoint(m, 'weights', b.path ?? `ckpt_${b.seq_id}`, b.overwrite === true);
      return submit(m, b.seq_id, 'json', () => {
        checkpoints.set(path, {
          path,
          kind: 'weights',
          baseModel: m.baseModel,
          loraRank: m.loraRank,
          snapshot: m.model.snapshot(true),
        });
        return { type: 'save_weights', path };
      });
    },
    '/api/v1/save_weights_for_sampler': (b) => {
      const m = modelOf(b.model_id);
      if (b.path == null && b.sampling_session_seq_id == null)
        throw new WireRefusal(400, 'Give path or sampling_session_seq_id');
      const name = b.path ?? `ss${b.sampling_session_seq_id}_seq${b.seq_id}`;
      const path = saveCheckpoint(m, 'sampler_weights', name, false);
      return submit(m, b.seq_id, 'json', () => {
        checkpoints.set(path, {
          path,
          kind: 'sampler_weights',
          baseModel: m.baseModel,
          loraRank: m.loraRank,
          snapshot: m.model.snapshot(false),
        });
        if (b.path != null) return { type: 'save_weights_for_sampler', path };
        return {
          type: 'save_weights_for_sampler',
          path,
          sampling_session_id: openSampler(m.sessionId, { model_path: path }),
        };
      });
    },
    '/api/v1/load_weights': (b) => {
      const m = modelOf(b.model_id);
      const ckpt = checkpoints.get(b.path);
      if (!ckpt || ckpt.kind !== 'weights') {
        throw new WireRefusal(
          400,
          'request.path must be in format tinker://source_model_id/weights/checkpoint_id and name a saved state',
        );
      }
      if (ckpt.baseModel !== m.baseModel)
        throw new WireRefusal(400, `checkpoint ${b.path} was trained on ${ckpt.baseModel}, not ${m.baseModel}`);
      return submit(m, b.seq_id, 'json', () => {
        m.model.restore(ckpt.snapshot, b.optimizer === true);
        return { type: 'load_weights', path: b.path };
      });
    },
    '/api/v1/unload_model': (b) => {
      const m = modelOf(b.model_id);
      return submit(undefined, undefined, 'json', () => {
        models.delete(m.modelId);
        return { type: 'unload_model', model_id: m.modelId };
      });
    },
    '/api/v1/create_sampling_session': (b) => ({
      type: 'create_sampling_session',
      sampling_session_id: openSampler(b.session_id, b),
    }),
    '/api/v1/asample': (b) => {
      if (json && b.sampling_params.max_tokens == null) throw new WireRefusal(400, 'max_tokens is currently required');
      if (b.sampling_params.max_tokens != null && b.sampling_params.max_tokens < 1)
        throw new WireRefusal(400, 'max_tokens must be a positive number');
      const sampler = b.sampling_session_id != null ? samplers.get(b.sampling_session_id) : undefined;
      if (!sampler) throw new WireRefusal(404, `Sampling session '${String(b.sampling_session_id)}' not found`);
      const prompt = modelInputTokens(b.prompt);
      const bad = prompt.find((t) => t < 0 || t >= sampler.model.vocabSize);
      if (prompt.length === 0 || bad !== undefined)
        throw new WireRefusal(
          400,
          prompt.length === 0 ? 'prompt has no tokens' : `prompt token id ${bad} is outside the vocabulary`,
        );
      const rng = b.sampling_params.seed != null ? seededRandom(b.sampling_params.seed) : random;
      return submit(undefined, undefined, 'sample', () =>
        runSample(sampler.model, prompt, b.sampling_params, b.num_samples ?? 1, b.prompt_logprobs === true, rng),
      );
    },
    '/api/v1/weights_info': (b) => {
      const ckpt = checkpoints.get(b.tinker_path);
      if (!ckpt) throw new WireRefusal(404, `Checkpoint not found: ${b.tinker_path}`);
      return {
        base_model: ckpt.baseModel,
        is_lora: true,
        lora_rank: ckpt.loraRank,
        train_unembed: true,
        train_mlp: true,
        train_attn: true,
      };
    },
    '/api/v1/telemetry': () => ({ status: 'accepted' }),
  };

  function answerFuture(b: Record<string, any>, accept: string, res: ServerResponse): number {
    const future = futures.get(b.request_id);
    if (!future) return send(res, 404, { detail: 'Future not found' });
    const pending = future.pending.shift() ?? (future.done ? undefined : '408');
    if (pending === 'try_again')
      return send(res, 200, { type: 'try_again', request_id: b.request_id, queue_state: 'active' });
    if (pending === '408')
      return send(
        res,
        408,
        json ? { detail: 'Timeout waiting for result' } : { detail: 'Request still pending', queue_state: 'active' },
      );
    if (future.error !== undefined) {
      return json
        ? send(res, 400, { detail: future.error })
        : send(res, 200, { error: future.error, category: 'user' });
    }
    const proto = !json && future.kind !== 'json' && accept.includes(PROTOBUF_CONTENT_TYPE);
    const bytes = proto
      ? future.kind === 'sample'
        ? encodeSampleResponse(future.result as SampleResponse)
        : encodeForwardBackwardOutput(future.result as ForwardBackwardOutput)
      : undefined;
    if (proto && b.allow_metadata_only === true && (options.metadataFirst ?? true) && !future.metadataSent) {
      future.metadataSent = true;
      return send(res, 200, { status: 'complete_metadata', response_payload_size: bytes!.byteLength });
    }
    if (bytes) {
      res.writeHead(200, { 'content-type': PROTOBUF_CONTENT_TYPE, 'content-length': bytes.byteLength });
      res.end(bytes);
      return 200;
    }
    return send(res, 200, future.result);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, record: RecordedTinkerRequest): Promise<number> {
    const path = record.path;
    const fault = faults.get(path);
    if (fault && fault.times > 0) {
      fault.times--;
      return send(res, fault.status, { detail: fault.detail });
    }
    if (options.apiKey !== undefined && req.headers['x-api-key'] !== options.apiKey) {
      return send(res, 401, { detail: 'Invalid API key: send the key from the Tinker console in X-API-Key' });
    }
    if (req.method === 'GET') {
      if (path === '/api/v1/healthz') return send(res, 200, { status: 'ok' });
      if (path === '/api/v1/get_server_capabilities') {
        return send(res, 200, { supported_models: Object.keys(baseModels).map((model_name) => ({ model_name })) });
      }
      return send(res, 404, { detail: 'Not Found' });
    }
    const raw = Buffer.concat(await collect(req));
    let body: Record<string, any>;
    if (record.contentType.includes(PROTOBUF_CONTENT_TYPE)) {
      if (json || path !== '/api/v1/forward_backward') {
        return send(res, 415, {
          detail: `Content-Type ${PROTOBUF_CONTENT_TYPE} is not supported here; send application/json`,
        });
      }
      if (req.headers['content-encoding'])
        return send(res, 415, { detail: `Content-Encoding ${req.headers['content-encoding']} is not supported` });
      let decoded;
      try {
        decoded = decodeForwardBackwardRequest(raw);
      } catch (error) {
        return send(res, 422, { detail: `Invalid proto forward_backward body: ${(error as Error).message}` });
      }
      record.body = decoded;
      const { data, loss_fn, loss_fn_config, ...rest } = decoded;
      body = { ...rest, forward_backward_input: { data, loss_fn, loss_fn_config } };
    } else {
      try {
        body = JSON.parse(raw.toString('utf8') || '{}') as Record<string, any>;
      } catch {
        return send(res, 422, { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
      }
      record.body = body;
      const schema = TINKER_REQUEST_SCHEMAS[path];
      if (schema) {
        const issues = checkSchema(body, schema);
        if (issues.length > 0) return send(res, 422, { detail: issues });
      }
    }
    if (path === '/api/v1/retrieve_future') return answerFuture(body, String(req.headers.accept ?? ''), res);
    const route = routes[path];
    if (!route) return send(res, 404, { detail: 'Not Found' });
    currentPath = path;
    try {
      return send(res, 200, route(body));
    } catch (error) {
      if (error instanceof WireRefusal) return send(res, error.status, { detail: error.detail });
      throw error;
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const record: RecordedTinkerRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      headers,
      contentType: String(req.headers['content-type'] ?? ''),
      body: undefined,
      status: 0,
    };
    requests.push(record);
    handle(req, res, record).then(
      (status) => (record.status = status),
      (error: unknown) => (record.status = send(res, 500, { detail: `stand-in fault: ${(error as Error).message}` })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    mode,
    requests,
    sessions,
    models,
    checkpoints,
    failNext(path, status, times = 1, detail = `injected HTTP ${status}`) {
      faults.set(path, { status, times, detail });
    },
    failNextFuture(path, detail) {
      futureFaults.set(path, detail);
    },
    requestsTo: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function collect(req: IncomingMessage): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks;
}

function send(res: ServerResponse, status: number, body: unknown): number {
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  return status;
}
