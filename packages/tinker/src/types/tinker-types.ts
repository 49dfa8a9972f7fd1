/**
 * The Tinker API's data types, spelled as they travel on the wire (snake_case fields), as the official Python SDK
 * 0.25.0 defines them (`tinker/types/`). Method options of the clients are camelCase; these data shapes are not, so a
 * datum built here is byte-for-byte the JSON the SDK sends.
 */

/** The element type of a {@link TensorData}: the public wire has only these two. */
export type TensorDtype = 'float32' | 'int64';

/**
 * A tensor: `data` flattened in row-major order, its `dtype`, and optionally its `shape` (a 1-D list of N elements
 * has shape `[N]`, the default). A sparse CSR tensor carries its non-zero values in `data` with `sparse_crow_indices`
 * and `sparse_col_indices`, and needs `shape`.
 */
export interface TensorData {
  data: number[];
  dtype: TensorDtype;
  shape?: number[];
  sparse_crow_indices?: number[];
  sparse_col_indices?: number[];
}

/** A run of token ids (`type: "encoded_text"`), the one chunk kind a text model takes. */
export interface EncodedTextChunk {
  type: 'encoded_text';
  tokens: number[];
}

/** A model's input: a list of chunks (token runs). */
export interface ModelInput {
  chunks: EncodedTextChunk[];
}

/** The loss functions Tinker computes on the server (SDK 0.25 `LossFnType`). */
export type LossFnType = 'cross_entropy' | 'importance_sampling' | 'ppo' | 'cispo' | 'dro';

/** The loss functions, in the order the SDK lists them. */
export const LOSS_FN_TYPES: readonly LossFnType[] = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'];

/**
 * A loss function's per-token inputs by name (`target_tokens`, `weights`, `advantages`, `logprobs`, …). Plain number
 * arrays are accepted and take the dtype the SDK gives their name (`target_tokens` int64, the rest float32).
 */
export type LossFnInputs = Record<string, TensorData | number[]>;

/** One training example: the model input and the loss function's per-token inputs. */
export interface Datum {
  model_input: ModelInput;
  loss_fn_inputs: LossFnInputs;
}

/** LoRA settings of a new training model (SDK defaults: every part trained). */
export interface LoraConfig {
  rank: number;
  seed?: number;
  train_unembed: boolean;
  train_mlp: boolean;
  train_attn: boolean;
}

/** Adam's parameters as `optim_step` sends them (SDK defaults: 1e-4, 0.9, 0.95, 1e-12, 0, 0). */
export interface AdamParams {
  learning_rate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weight_decay: number;
  grad_clip_norm: number;
}

/** Sampling parameters (SDK defaults: temperature 1, top_k -1, top_p 1; `max_tokens` unset). */
export interface SamplingParams {
  max_tokens?: number;
  seed?: number;
  stop?: string | string[] | number[];
  temperature: number;
  top_k: number;
  top_p: number;
}

/** Why a sampled sequence ended. */
export type StopReason = 'stop' | 'length';

/** One sampled sequence: its token ids, their logprobs (when the server returns them) and why it stopped. */
export interface SampledSequence {
  tokens: number[];
  logprobs?: number[];
  stop_reason: StopReason;
}

/** The result of a sample request. `prompt_logprobs[0]` is `null` (the first token has no logprob). */
export interface SampleResponse {
  type?: 'sample';
  sequences: SampledSequence[];
  prompt_logprobs?: (number | null)[];
  topk_prompt_logprobs?: ([number, number][] | null)[];
  prompt_cache_hit_tokens?: number;
}

/** The result of a forward(-backward) pass: per-datum outputs (`logprobs`, …) and metrics named `name:reduction`. */
export interface ForwardBackwardOutput {
  loss_fn_output_type: string;
  loss_fn_outputs: Record<string, TensorData>[];
  metrics: Record<string, number>;
}

/** The result of `optim_step`. */
export interface OptimStepResponse {
  metrics?: Record<string, number> | null;
}

/** What `get_info` says about a training model. */
export interface GetInfoResponse {
  type?: 'get_info';
  model_id: string;
  model_data: { arch?: string | null; model_name?: string | null; tokenizer_id?: string | null };
  is_lora?: boolean | null;
  lora_rank?: number | null;
  model_name?: string | null;
}

/** What `weights_info` says about a saved checkpoint. */
export interface WeightsInfoResponse {
  base_model: string;
  is_lora: boolean;
  lora_rank?: number | null;
  train_unembed?: boolean | null;
  train_mlp?: boolean | null;
  train_attn?: boolean | null;
}

/** A saved checkpoint's path (`tinker://<model_id>/weights/<name>` or `…/sampler_weights/<name>`). */
export interface SaveWeightsResponse {
  path: string;
}

/** The models a server serves (`get_server_capabilities`). */
export interface ServerCapabilities {
  supported_models: { model_name?: string | null; max_context_length?: number | null }[];
}

/** The server's client configuration flags (`/api/v1/client/config`); unknown flags are kept as they came. */
export interface ClientConfigResponse {
  pjwt_auth_enabled?: boolean;
  parallel_fwdbwd_chunks?: boolean;
  proto_compress_fwdbwd?: boolean;
  fwdbwd_max_chunk_len?: number;
  fwdbwd_max_chunk_bytes_count?: number;
  create_model_via_load_weights?: boolean;
  [flag: string]: unknown;
}

/** Why a request failed on the server (`RequestErrorCategory`). */
export type RequestErrorCategory = 'unknown' | 'server' | 'user';
