import { stepMetricsWithoutPolicyStats } from '../algorithms/step-metrics';
import { type TrainingBackend, type TrainingSample, type TrainResult } from '@agl/core/algorithms';
import { fineTuneOpenAi, type FineTuneOpenAiOptions, type FineTuneOpenAiResult } from './fine-tune-openai';

/** Options of {@link OpenAiFineTuningBackend}: those of {@link fineTuneOpenAi} without the per-call ones. */
export type OpenAiFineTuningBackendOptions = Omit<FineTuneOpenAiOptions, 'selection' | 'wait' | 'publish' | 'signal'>;

/**
 * A {@link TrainingBackend} over the OpenAI fine-tuning API. A hosted model trains on transcripts, not token ids, so
 * `train` reads the rollouts the samples came from (`sample.rolloutId`) back from the store and fine-tunes on them
 * (`sft`: their transcripts; `dpo`: better/worse answers per task among them), waits for the job, and returns the
 * resources naming the tuned model for the algorithm to publish. Token-level fields of the samples are ignored.
 */
export class OpenAiFineTuningBackend implements TrainingBackend {
  readonly #options: OpenAiFineTuningBackendOptions;
  /** Every job this backend ran, in order. */
  readonly jobs: FineTuneOpenAiResult[] = [];

  constructor(options: OpenAiFineTuningBackendOptions) {
    this.#options = options;
  }

  async train(samples: readonly TrainingSample[], options: { signal?: AbortSignal }): Promise<TrainResult> {
    options.signal?.throwIfAborted();
    const started = Date.now();
    const result = await fineTuneOpenAi({
      ...this.#options,
      selection: { rolloutIds: [...new Set(samples.map((s) => s.rolloutId))] },
      wait: true,
      publish: false,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    this.jobs.push(result);
    options.signal?.throwIfAborted();
    const seconds = Math.max((Date.now() - started) / 1000, 1e-3);
    return {
      resources: result.resources ?? {},
      metrics: stepMetricsWithoutPolicyStats(samples, {
        loss: result.trainLoss ?? Number.NaN,
        tokensPerSecond: (result.trainedTokens ?? 0) / seconds,
        nExamples: result.nExamples,
      }),
    };
  }
}
