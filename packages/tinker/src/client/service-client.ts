import { UserError } from '@agl/core/errors';
import type { TokenizerFiles } from '../chat/tokenizer-files';
import type { ClientConfigResponse, ServerCapabilities, WeightsInfoResponse } from '../types/tinker-types';
import { submitAndWait, type ClientContext, type ForwardBackwardWire } from './client-context';
import { SamplingClient } from './sampling-client';
import { TINKER_SDK_WIRE_VERSION, TinkerHttp, type TinkerConnectionOptions } from './tinker-http';
import { TrainingClient } from './training-client';

/** Options of a {@link ServiceClient}. */
export interface ServiceClientOptions extends TinkerConnectionOptions {
  /** Tags of the session. */
  tags?: string[];
  /** Metadata of the session. */
  userMetadata?: Record<string, unknown>;
  /** The Tinker project to bill. */
  projectId?: string;
  /** How often the session heartbeat is sent. Default 10 000 ms, as the SDK. */
  heartbeatIntervalMs?: number;
  /** The forward_backward wire: `auto` (protobuf, JSON when refused; default), `protobuf` or `json`. */
  forwardBackwardWire?: ForwardBackwardWire;
  /** Told each time a request waits in the service's queue. */
  onQueueState?: (state: string, reason: string | undefined) => void;
}

/** Options of a new LoRA training model. */
export interface LoraTrainingOptions {
  /** The base model (`Qwen/Qwen3-8B`, …). */
  baseModel: string;
  /** LoRA rank. Default 32, as the SDK. */
  rank?: number;
  seed?: number;
  trainMlp?: boolean;
  trainAttn?: boolean;
  trainUnembed?: boolean;
  userMetadata?: Record<string, unknown>;
}

/** Where a sampling client samples from: a saved sampler path, or a base model. */
export type SamplingTarget = { modelPath: string } | { baseModel: string };

/**
 * The entry point to a Tinker service (hosted Tinker or a self-hosted Tinker-compatible server). On first use it
 * fetches the client config, creates a session and sends a heartbeat every 10 s until {@link ServiceClient.close}.
 *
 * ```ts
 * const service = new ServiceClient(); // TINKER_API_KEY, TINKER_BASE_URL
 * const training = await service.createLoraTrainingClient({ baseModel: 'Qwen/Qwen3-8B', rank: 32 });
 * ```
 */
export class ServiceClient {
  readonly http: TinkerHttp;
  readonly #options: ServiceClientOptions;
  #context: Promise<ClientContext> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #modelSeq = 0;
  #samplingSeq = 0;
  #closed = false;
  /** The last heartbeat failure, if the latest heartbeat failed. */
  lastHeartbeatError: Error | undefined;

  constructor(options: ServiceClientOptions = {}) {
    this.http = new TinkerHttp(options);
    this.#options = options;
  }

  /** Starts the session (client config, JWT exchange when the server asks for it, create_session, heartbeats). */
  async start(): Promise<string> {
    return (await this.#ctx()).sessionId;
  }

  /** The session id, once started. */
  async sessionId(): Promise<string> {
    return this.start();
  }

  /** The server's client-config flags. */
  async clientConfig(): Promise<ClientConfigResponse> {
    return (await this.#ctx()).clientConfig;
  }

  /** Sends one session heartbeat now (they are also sent on a timer). */
  async heartbeat(): Promise<void> {
    const context = await this.#ctx();
    await this.http.requestOk('session_heartbeat', '/api/v1/session_heartbeat', {
      method: 'POST',
      body: { session_id: context.sessionId, type: 'session_heartbeat' },
      timeoutMs: 10_000,
    });
  }

  /** The models the server serves. */
  async getServerCapabilities(): Promise<ServerCapabilities> {
    const response = await this.http.requestOk('get_server_capabilities', '/api/v1/get_server_capabilities', {
      method: 'GET',
      retry: true,
    });
    return JSON.parse(new TextDecoder().decode(response.bytes)) as ServerCapabilities;
  }

  /** What a saved checkpoint (`tinker://…/weights/…`) was trained from. */
  async weightsInfo(tinkerPath: string): Promise<WeightsInfoResponse> {
    return this.http.postJson<WeightsInfoResponse>('weights_info', '/api/v1/weights_info', { tinker_path: tinkerPath });
  }

  /**
   * The tokenizer and chat template the server itself serves for a model (a base model name or `tinker://` path) or a
   * tokenizer id (`get_info` → `model_data.tokenizer_id`): AGL's extension `GET /api/v1/tokenizer`, which the embedded
   * policy (`agl tiny serve --tinker`) answers with Hugging Face `tokenizer.json` + `tokenizer_config.json`. Null when
   * the server does not offer it (hosted Tinker answers 404: its tokenizers come from the hub).
   */
  async serverTokenizerFiles(ref: {
    model?: string | null;
    tokenizerId?: string | null;
  }): Promise<TokenizerFiles | null> {
    const query = new URLSearchParams();
    if (ref.tokenizerId) query.set('tokenizer_id', ref.tokenizerId);
    else if (ref.model) query.set('model', ref.model);
    else throw new UserError('serverTokenizerFiles: give a model or a tokenizerId.');
    const response = await this.http.request('tokenizer', `/api/v1/tokenizer?${query.toString()}`, {
      method: 'GET',
      retry: true,
    });
    if (response.status === 404 || response.status === 405) return null;
    if (response.status >= 400) throw this.http.apiError('tokenizer', response);
    const body = JSON.parse(new TextDecoder().decode(response.bytes)) as {
      tokenizer_id?: string;
      tokenizer_json?: Record<string, unknown>;
      tokenizer_config?: Record<string, unknown>;
    };
    if (!body.tokenizer_json || !body.tokenizer_config) return null;
    return {
      tokenizerJson: body.tokenizer_json,
      tokenizerConfig: body.tokenizer_config,
      source: body.tokenizer_id ?? `${this.http.baseUrl} ${query.toString()}`,
    };
  }

  /** Creates a LoRA model on `baseModel` (`create_model`) and returns its training client. */
  async createLoraTrainingClient(options: LoraTrainingOptions): Promise<TrainingClient> {
    if (!options.baseModel) throw new UserError('Tinker create_model: give a baseModel (e.g. "Qwen/Qwen3-8B")');
    const context = await this.#ctx();
    const modelSeqId = this.#modelSeq++;
    const result = await submitAndWait<{ model_id?: string }>(
      context,
      'create_model',
      'CreateModel',
      '/api/v1/create_model',
      {
        body: {
          session_id: context.sessionId,
          model_seq_id: modelSeqId,
          base_model: options.baseModel,
          ...(options.userMetadata ? { user_metadata: options.userMetadata } : {}),
          lora_config: {
            rank: options.rank ?? 32,
            ...(options.seed === undefined ? {} : { seed: options.seed }),
            train_unembed: options.trainUnembed ?? true,
            train_mlp: options.trainMlp ?? true,
            train_attn: options.trainAttn ?? true,
          },
          type: 'create_model',
        },
      },
    );
    const modelId = result.model_id ?? `${context.sessionId}:train:${modelSeqId}`;
    return new TrainingClient(context, modelId, (path) => this.createSamplingClient({ modelPath: path }));
  }

  /**
   * A training client resumed from a saved state (`tinker://…/weights/…`): a new LoRA model with the checkpoint's base
   * model and rank (`weights_info`), then `load_weights` (with the optimizer state when `withOptimizer`).
   */
  async createTrainingClientFromState(
    path: string,
    options: { withOptimizer?: boolean } = {},
  ): Promise<TrainingClient> {
    const info = await this.weightsInfo(path);
    const training = await this.createLoraTrainingClient({
      baseModel: info.base_model,
      ...(info.lora_rank ? { rank: info.lora_rank } : {}),
      ...(info.train_mlp === undefined || info.train_mlp === null ? {} : { trainMlp: info.train_mlp }),
      ...(info.train_attn === undefined || info.train_attn === null ? {} : { trainAttn: info.train_attn }),
      ...(info.train_unembed === undefined || info.train_unembed === null ? {} : { trainUnembed: info.train_unembed }),
    });
    await training.loadWeights(path, { optimizer: options.withOptimizer ?? false });
    return training;
  }

  /** Opens a sampling session on a saved sampler path or a base model. */
  async createSamplingClient(target: SamplingTarget): Promise<SamplingClient> {
    const context = await this.#ctx();
    const seq = this.#samplingSeq++;
    const result = await this.http.postJson<{ sampling_session_id: string }>(
      'create_sampling_session',
      '/api/v1/create_sampling_session',
      {
        session_id: context.sessionId,
        sampling_session_seq_id: seq,
        ...('modelPath' in target ? { model_path: target.modelPath } : { base_model: target.baseModel }),
        type: 'create_sampling_session',
      },
    );
    return new SamplingClient(
      context,
      result.sampling_session_id,
      'modelPath' in target ? target.modelPath : target.baseModel,
    );
  }

  /** Stops the heartbeat. The service ends the session once heartbeats stop. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  #ctx(): Promise<ClientContext> {
    if (this.#closed) return Promise.reject(new UserError('Tinker: this ServiceClient is closed; make a new one'));
    this.#context ??= this.#startSession().catch((error: unknown) => {
      this.#context = undefined;
      throw error;
    });
    return this.#context;
  }

  async #startSession(): Promise<ClientContext> {
    const clientConfig = await this.http.postJson<ClientConfigResponse>('client_config', '/api/v1/client/config', {
      sdk_version: TINKER_SDK_WIRE_VERSION,
    });
    if (clientConfig.pjwt_auth_enabled) {
      const { jwt } = await this.http.postJson<{ jwt: string }>('auth_token', '/api/v1/auth/token', {});
      this.http.setAuthValue(jwt);
    }
    const session = await this.http.postJson<{
      session_id: string;
      info_message?: string;
      warning_message?: string;
      error_message?: string;
    }>('create_session', '/api/v1/create_session', {
      tags: this.#options.tags ?? [],
      user_metadata: this.#options.userMetadata ?? {},
      sdk_version: TINKER_SDK_WIRE_VERSION,
      ...(this.#options.projectId ? { project_id: this.#options.projectId } : {}),
      type: 'create_session',
    });
    if (session.error_message) throw new UserError(`Tinker create_session: ${session.error_message}`);
    const interval = this.#options.heartbeatIntervalMs ?? 10_000;
    this.#heartbeat = setInterval(() => {
      this.heartbeat().then(
        () => (this.lastHeartbeatError = undefined),
        (error: unknown) => (this.lastHeartbeatError = error as Error),
      );
    }, interval);
    this.#heartbeat.unref?.();
    return {
      http: this.http,
      sessionId: session.session_id,
      clientConfig,
      wire: { forwardBackward: this.#options.forwardBackwardWire ?? 'auto' },
      ...(this.#options.onQueueState ? { onQueueState: this.#options.onQueueState } : {}),
    };
  }
}
