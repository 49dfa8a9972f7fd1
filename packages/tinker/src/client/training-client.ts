import { encodeForwardBackwardRequest } from '../proto/forward-backward-request-codec';
import { PROTOBUF_CONTENT_TYPE } from '../proto/tinker-public-proto';
import { modelInputTokens, normalizeDatum, validateDatums } from '../types/datum-builders';
import type {
  AdamParams,
  Datum,
  ForwardBackwardOutput,
  GetInfoResponse,
  LossFnType,
  OptimStepResponse,
  SaveWeightsResponse,
} from '../types/tinker-types';
import { submitOnly, submitAndWait, type ClientContext } from './client-context';
import { errorDetail } from './tinker-http';
import { futureOf, retrieveFuture } from './retrieve-future';
import type { SamplingClient } from './sampling-client';

/** Options of `forwardBackward` / `forward`. */
export interface ForwardBackwardOptions {
  /** Loss-specific settings (e.g. `clip_low_threshold`), sent as `loss_fn_config`. */
  lossFnConfig?: Record<string, number>;
}

/** Adam's parameters in camelCase; unset ones take the SDK's defaults. */
export interface AdamOptions {
  learningRate?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  gradClipNorm?: number;
}

/** Options of a checkpoint save. */
export interface SaveOptions {
  /** How long the service keeps the checkpoint (unset: the service's default). */
  ttlSeconds?: number;
}

/** The SDK's Adam defaults (`AdamParams`). */
export function adamParams(options: AdamOptions = {}): AdamParams {
  return {
    learning_rate: options.learningRate ?? 1e-4,
    beta1: options.beta1 ?? 0.9,
    beta2: options.beta2 ?? 0.95,
    eps: options.eps ?? 1e-12,
    weight_decay: options.weightDecay ?? 0,
    grad_clip_norm: options.gradClipNorm ?? 0,
  };
}

const PROTO_BYTES_PER_TOKEN = 4;

/** Merges per-chunk outputs: outputs concatenated; `x:sum` metrics added, `x:mean` weighted by datums, min/max kept. */
export function combineForwardBackwardOutputs(parts: { output: ForwardBackwardOutput; count: number }[]) {
  if (parts.length === 1) return parts[0]!.output;
  const total = parts.reduce((n, part) => n + part.count, 0);
  const metrics: Record<string, number> = {};
  for (const { output, count } of parts) {
    for (const [key, value] of Object.entries(output.metrics)) {
      const reduction = key.split(':').pop();
      const prev = metrics[key];
      if (reduction === 'sum') metrics[key] = (prev ?? 0) + value;
      else if (reduction === 'min') metrics[key] = Math.min(prev ?? Infinity, value);
      else if (reduction === 'max') metrics[key] = Math.max(prev ?? -Infinity, value);
      else metrics[key] = (prev ?? 0) + (value * count) / total;
    }
  }
  return {
    loss_fn_output_type: parts[0]!.output.loss_fn_output_type,
    loss_fn_outputs: parts.flatMap((part) => part.output.loss_fn_outputs),
    metrics,
  };
}

/**
 * A LoRA model being trained on the service. Every call carries the next `seq_id` (1, 2, 3, …) and is submitted in
 * call order, so the server runs them in that order; results are awaited concurrently. Make one with
 * `ServiceClient.createLoraTrainingClient`.
 */
export class TrainingClient {
  readonly modelId: string;
  readonly #context: ClientContext;
  readonly #makeSamplingClient: (modelPath: string) => Promise<SamplingClient>;
  #requestCounter = 0;
  #turn: Promise<void> = Promise.resolve();

  /** @internal */
  constructor(
    context: ClientContext,
    modelId: string,
    makeSamplingClient: (modelPath: string) => Promise<SamplingClient>,
  ) {
    this.#context = context;
    this.modelId = modelId;
    this.#makeSamplingClient = makeSamplingClient;
  }

  /** The next seq_id this client will send. */
  get nextSeqId(): number {
    return this.#requestCounter + 1;
  }

  /** What the service says about the model (base model, tokenizer id, LoRA rank). */
  async getInfo(): Promise<GetInfoResponse> {
    return this.#context.http.postJson<GetInfoResponse>('get_info', '/api/v1/get_info', {
      model_id: this.modelId,
      type: 'get_info',
    });
  }

  /** A forward and backward pass over `data` with a server-side loss; gradients accumulate until `optimStep`. */
  async forwardBackward(
    data: Datum[],
    lossFn: LossFnType,
    options: ForwardBackwardOptions = {},
  ): Promise<ForwardBackwardOutput> {
    return this.#runForwardBackward('forward_backward', data, lossFn, options, false);
  }

  /** A forward pass only (per-token logprobs and the loss, no gradients). */
  async forward(
    data: Datum[],
    lossFn: LossFnType,
    options: ForwardBackwardOptions = {},
  ): Promise<ForwardBackwardOutput> {
    return this.#runForwardBackward('forward', data, lossFn, options, true);
  }

  /** One Adam step over the accumulated gradients. */
  async optimStep(adam: AdamOptions = {}): Promise<OptimStepResponse> {
    return this.#inTurn('optim_step', (seqId) => ({
      requestType: 'OptimStep',
      path: '/api/v1/optim_step',
      body: { adam_params: adamParams(adam), model_id: this.modelId, seq_id: seqId, type: 'optim_step' },
    }));
  }

  /** Saves the training state (weights and optimizer) as `tinker://<model_id>/weights/<name>` (SDK `save_state`). */
  async saveWeights(name: string, options: SaveOptions = {}): Promise<SaveWeightsResponse> {
    return this.#inTurn('save_weights', (seqId) => ({
      requestType: 'SaveWeights',
      path: '/api/v1/save_weights',
      body: {
        model_id: this.modelId,
        path: name,
        seq_id: seqId,
        ...(options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds }),
        overwrite: false,
        type: 'save_weights',
      },
    }));
  }

  /** Loads a saved training state (`tinker://…/weights/…`), with the optimizer's state when `optimizer` is true. */
  async loadWeights(path: string, options: { optimizer?: boolean } = {}): Promise<{ path?: string }> {
    return this.#inTurn('load_weights', (seqId) => ({
      requestType: 'LoadWeights',
      path: '/api/v1/load_weights',
      body: {
        model_id: this.modelId,
        path,
        seq_id: seqId,
        optimizer: options.optimizer ?? false,
        type: 'load_weights',
      },
    }));
  }

  /** Saves weights a sampler can load, as `tinker://<model_id>/sampler_weights/<name>`. */
  async saveWeightsForSampler(name: string, options: SaveOptions = {}): Promise<SaveWeightsResponse> {
    return this.#inTurn('save_weights_for_sampler', (seqId) => ({
      requestType: 'SaveWeightsForSampler',
      path: '/api/v1/save_weights_for_sampler',
      body: {
        model_id: this.modelId,
        path: name,
        seq_id: seqId,
        ...(options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds }),
        type: 'save_weights_for_sampler',
      },
    }));
  }

  /** Saves sampler weights under `name` and opens a sampling session on them. */
  async saveWeightsAndGetSamplingClient(name: string): Promise<SamplingClient> {
    const { path } = await this.saveWeightsForSampler(name);
    return this.#makeSamplingClient(path);
  }

  /** A sampling client on a saved sampler path. */
  async createSamplingClient(modelPath: string): Promise<SamplingClient> {
    return this.#makeSamplingClient(modelPath);
  }

  /** Frees the model on the service. */
  async unloadModel(): Promise<{ model_id?: string }> {
    return submitAndWait(this.#context, 'unload_model', 'UnloadModel', '/api/v1/unload_model', {
      body: { model_id: this.modelId, type: 'unload_model' },
    });
  }

  /** Runs `submit` in call order (the turn), then waits for the result outside the turn. */
  async #inTurn<T>(
    call: string,
    build: (seqId: number) => { requestType: Parameters<typeof submitOnly>[2]; path: string; body: unknown },
  ): Promise<T> {
    const seqId = ++this.#requestCounter;
    const { requestType, path, body } = build(seqId);
    const wait = await this.#takeTurn(() => submitOnly<T>(this.#context, call, requestType, path, { body }));
    return wait();
  }

  async #takeTurn<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.#turn;
    let release!: () => void;
    this.#turn = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      return await fn();
    } finally {
      release();
    }
  }

  #chunks(data: Datum[]): Datum[][] {
    const maxLen = this.#context.clientConfig.fwdbwd_max_chunk_len ?? 1024;
    const maxBytes = this.#context.clientConfig.fwdbwd_max_chunk_bytes_count ?? 5_000_000;
    const chunks: Datum[][] = [];
    let current: Datum[] = [];
    let bytes = 0;
    for (const datum of data) {
      const tokens = modelInputTokens(datum.model_input).length;
      const inputs = Object.values(normalizeDatum(datum).loss_fn_inputs).reduce(
        (n, tensor) => n + tensor.data.length * (tensor.dtype === 'int64' ? 8 : 4),
        0,
      );
      const estimate = tokens * PROTO_BYTES_PER_TOKEN + inputs;
      if (current.length > 0 && (bytes + estimate > maxBytes || current.length === maxLen)) {
        chunks.push(current);
        current = [];
        bytes = 0;
      }
      current.push(datum);
      bytes += estimate;
    }
    if (current.length > 0) chunks.push(current);
    return chunks;
  }

  async #runForwardBackward(
    call: 'forward_backward' | 'forward',
    data: Datum[],
    lossFn: LossFnType,
    options: ForwardBackwardOptions,
    forwardOnly: boolean,
  ): Promise<ForwardBackwardOutput> {
    validateDatums(call, data, lossFn);
    const chunks = this.#chunks(data).map((chunk) => ({ chunk, seqId: ++this.#requestCounter }));
    const waits = await this.#takeTurn(async () => {
      const out: (() => Promise<ForwardBackwardOutput>)[] = [];
      for (const { chunk, seqId } of chunks) {
        out.push(await this.#submitForwardBackward(call, chunk, lossFn, options, forwardOnly, seqId));
      }
      return out;
    });
    const outputs = await Promise.all(waits.map((wait) => wait()));
    return combineForwardBackwardOutputs(outputs.map((output, i) => ({ output, count: chunks[i]!.chunk.length })));
  }

  async #submitForwardBackward(
    call: string,
    data: Datum[],
    lossFn: LossFnType,
    options: ForwardBackwardOptions,
    forwardOnly: boolean,
    seqId: number,
  ): Promise<() => Promise<ForwardBackwardOutput>> {
    const requestType = forwardOnly ? 'Forward' : 'ForwardBackward';
    const wire = this.#context.wire;
    if (wire.forwardBackward !== 'json') {
      const body = encodeForwardBackwardRequest({
        model_id: this.modelId,
        seq_id: seqId,
        data,
        loss_fn: lossFn,
        ...(options.lossFnConfig ? { loss_fn_config: options.lossFnConfig } : {}),
        forward_only: forwardOnly,
      });
      const request = { body, contentType: PROTOBUF_CONTENT_TYPE };
      if (wire.forwardBackward === 'protobuf') {
        return submitOnly(this.#context, call, requestType, '/api/v1/forward_backward', request, 'forward_backward');
      }
      // auto: protobuf first, JSON when the server refuses protobuf bodies.
      const response = await this.#context.http.request(call, '/api/v1/forward_backward', {
        method: 'POST',
        retry: true,
        ...request,
      });
      if (!refusesProtobuf(response.status, response.bytes)) {
        if (response.status >= 400) throw this.#context.http.apiError(call, response);
        const future = futureOf(call, JSON.parse(new TextDecoder().decode(response.bytes)));
        return () =>
          retrieveFuture<ForwardBackwardOutput>(this.#context.http, call, requestType, future, 'forward_backward', {
            ...(this.#context.onQueueState ? { onQueueState: this.#context.onQueueState } : {}),
          });
      }
      wire.forwardBackward = 'json';
    }
    const input = {
      data: data.map((datum, i) => normalizeDatum(datum, i)),
      loss_fn: lossFn,
      ...(options.lossFnConfig ? { loss_fn_config: options.lossFnConfig } : {}),
    };
    const [path, body] = forwardOnly
      ? ['/api/v1/forward', { forward_input: input, model_id: this.modelId, seq_id: seqId }]
      : ['/api/v1/forward_backward', { forward_backward_input: input, model_id: this.modelId, seq_id: seqId }];
    return submitOnly(this.#context, call, requestType, path, { body }, 'forward_backward');
  }
}

/** True when a server answered a protobuf body as one that only reads JSON (415, or a JSON parse complaint). */
export function refusesProtobuf(status: number, bytes: Uint8Array): boolean {
  if (status === 415) return true;
  if (status !== 400 && status !== 422) return false;
  return /json|content[- ]type/i.test(errorDetail(bytes));
}
