import { ConnectionError } from '@agl/core/errors';
import { modelInputFromTokens } from '../types/datum-builders';
import type { ModelInput, SampleResponse, SamplingParams } from '../types/tinker-types';
import { submitOnly, type ClientContext } from './client-context';
import { TinkerApiError } from './tinker-errors';

/** Sampling options in camelCase; unset ones take the SDK's defaults (temperature 1, top_k -1, top_p 1). */
export interface SampleOptions {
  /** How many sequences to sample. Default 1. */
  numSamples?: number;
  maxTokens?: number;
  temperature?: number;
  topK?: number;
  topP?: number;
  seed?: number;
  /** Stop strings or stop token ids. */
  stop?: string | string[] | number[];
  /** Also return the prompt's per-token logprobs. */
  includePromptLogprobs?: boolean;
  /** Also return the top-k logprobs of each prompt position. */
  topkPromptLogprobs?: number;
}

/** The SDK's sampling-param defaults applied to `options`. */
export function samplingParams(options: SampleOptions = {}): SamplingParams {
  return {
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
    temperature: options.temperature ?? 1,
    top_k: options.topK ?? -1,
    top_p: options.topP ?? 1,
  };
}

/**
 * Samples from one model (a saved `tinker://…/sampler_weights/…` path or a base model) through a sampling session.
 * Each request carries the session's next `seq_id` (0, 1, 2, …). A 429 backs off and sends again, as the SDK does.
 */
export class SamplingClient {
  readonly samplingSessionId: string;
  /** The model path or base model this client samples from. */
  readonly model: string;
  readonly #context: ClientContext;
  #seq = 0;

  /** @internal */
  constructor(context: ClientContext, samplingSessionId: string, model: string) {
    this.#context = context;
    this.samplingSessionId = samplingSessionId;
    this.model = model;
  }

  /** Samples continuations of `prompt` (a model input or token ids): their token ids, logprobs and stop reasons. */
  async sample(prompt: ModelInput | readonly number[], options: SampleOptions = {}): Promise<SampleResponse> {
    const input = Array.isArray(prompt) ? modelInputFromTokens(prompt) : (prompt as ModelInput);
    const seqId = this.#seq++;
    const body = {
      sampling_session_id: this.samplingSessionId,
      seq_id: seqId,
      num_samples: options.numSamples ?? 1,
      prompt: input,
      sampling_params: samplingParams(options),
      prompt_logprobs: options.includePromptLogprobs ?? false,
      topk_prompt_logprobs: options.topkPromptLogprobs ?? 0,
      type: 'sample',
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const wait = await submitOnly<SampleResponse>(
          this.#context,
          'asample',
          'Sample',
          '/api/v1/asample',
          { body, headers: { 'X-Tinker-Sampling-Backpressure': '1' }, retry: false },
          'sample',
        );
        return await wait();
      } catch (error) {
        // A submit answered 429 is back-pressure: wait and send again (SDK: 1 s, 5 s for large prompts).
        if (TinkerApiError.isInstance(error) && error.status === 429 && attempt < 30) {
          await this.#context.http.sleep(1000);
          continue;
        }
        const transient =
          (TinkerApiError.isInstance(error) && error.status >= 500) || ConnectionError.isInstance(error);
        if (transient && attempt < 10) {
          await this.#context.http.sleep(this.#context.http.retryDelay(attempt));
          continue;
        }
        throw error;
      }
    }
  }

  /** The per-token logprobs of `prompt` under the model (`prompt_logprobs` of a 1-token sample); the first is null. */
  async computeLogprobs(prompt: ModelInput | readonly number[]): Promise<(number | null)[]> {
    const response = await this.sample(prompt, { maxTokens: 1, includePromptLogprobs: true });
    return response.prompt_logprobs ?? [];
  }
}
