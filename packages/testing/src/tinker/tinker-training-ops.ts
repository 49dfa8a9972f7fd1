import type { Datum, ForwardBackwardOutput, SampleResponse, TensorData } from '@agl/tinker';
import { denseValues, modelInputTokens, normalizeDatum, REQUIRED_LOSS_INPUTS } from '@agl/tinker';
import { positionLoss, type BigramModel, type LossPosition } from './bigram-model';

/** A request the stand-in refuses: HTTP status and the `detail` the real service would give. */
export class WireRefusal extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** The loss functions SDK 0.25 names (the hosted service's set). */
export const TINKER_LOSSES = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'];
/** SkyRL's set (no `dro`). */
export const SKYRL_LOSSES = ['cross_entropy', 'importance_sampling', 'ppo', 'cispo'];

/** A checked forward_backward input, ready to run. */
export interface CheckedBatch {
  lossFn: string;
  config: Record<string, number>;
  datums: { tokens: number[]; positions: LossPosition[] }[];
}

/**
 * Checks a forward_backward input the way the service does before it queues it: a known loss, each datum's required
 * inputs with the right dtype, one value per input token, token ids inside the vocabulary. `weightsDefaultToOne`: a
 * missing `weights` is all ones (SkyRL's reading).
 */
export function checkBatch(
  data: Datum[],
  lossFn: string,
  config: Record<string, number> | null | undefined,
  vocabSize: number,
  losses: readonly string[],
  weightsDefaultToOne = false,
): CheckedBatch {
  if (!losses.includes(lossFn)) {
    throw new WireRefusal(400, `Unsupported loss_fn "${lossFn}"; supported: ${losses.join(', ')}`);
  }
  if (data.length === 0) throw new WireRefusal(400, 'forward_backward_input.data must not be empty');
  const required = REQUIRED_LOSS_INPUTS[lossFn as keyof typeof REQUIRED_LOSS_INPUTS];
  const datums = data.map((raw, i) => {
    let datum;
    try {
      datum = normalizeDatum(raw, i);
    } catch (error) {
      throw new WireRefusal(400, (error as Error).message);
    }
    const tokens = modelInputTokens(datum.model_input);
    const inputs = { ...datum.loss_fn_inputs };
    if (weightsDefaultToOne && lossFn === 'cross_entropy' && !inputs.weights) {
      inputs.weights = { data: tokens.map(() => 1), dtype: 'float32' };
    }
    for (const name of required) {
      if (!inputs[name])
        throw new WireRefusal(400, `data[${i}].loss_fn_inputs is missing "${name}", which ${lossFn} requires`);
    }
    const values: Record<string, number[]> = {};
    for (const [name, tensor] of Object.entries(inputs)) {
      const expected = name === 'target_tokens' ? 'int64' : 'float32';
      if (tensor.dtype !== expected) {
        throw new WireRefusal(400, `data[${i}].loss_fn_inputs.${name} has dtype ${tensor.dtype}; expected ${expected}`);
      }
      values[name] = denseValues(tensor as TensorData);
      if (values[name]!.length !== tokens.length) {
        throw new WireRefusal(
          400,
          `data[${i}].loss_fn_inputs.${name} has ${values[name]!.length} values but model_input has ${tokens.length} tokens`,
        );
      }
    }
    for (const id of [...tokens, ...(values.target_tokens ?? [])]) {
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
        throw new WireRefusal(
          400,
          `data[${i}]: token id ${id} is outside the model's vocabulary (0..${vocabSize - 1})`,
        );
      }
    }
    const positions = tokens.map((prev, t) => ({
      prev,
      target: values.target_tokens![t]!,
      weight: values.weights?.[t] ?? 0,
      advantage: values.advantages?.[t] ?? 0,
      samplerLogprob: values.logprobs?.[t] ?? 0,
    }));
    return { tokens, positions };
  });
  return { lossFn, config: { ...(config ?? {}) }, datums };
}

/** Runs a checked batch on the model: real per-token logprobs, the summed loss, and (unless forward-only) gradients. */
export function runBatch(model: BigramModel, batch: CheckedBatch, forwardOnly: boolean): ForwardBackwardOutput {
  const loss = positionLoss(batch.lossFn, batch.config);
  let total = 0;
  const outputs = batch.datums.map((datum) => {
    const result = model.lossAndGrad(datum.positions, loss, forwardOnly);
    total += result.loss;
    const perToken = datum.positions.map((p, t) => loss(result.logprobs[t]!, p).loss);
    return {
      logprobs: { data: result.logprobs, dtype: 'float32' as const, shape: [result.logprobs.length] },
      elementwise_loss: { data: perToken, dtype: 'float32' as const, shape: [perToken.length] },
    };
  });
  return { loss_fn_output_type: 'ArrayRecord', loss_fn_outputs: outputs, metrics: { 'loss:sum': total } };
}

/** Sampling parameters as the wire carries them. */
export interface WireSamplingParams {
  max_tokens?: number | null;
  seed?: number | null;
  stop?: string | string[] | number[] | null;
  temperature?: number | null;
}

/** Samples `numSamples` sequences (and prompt logprobs when asked) from the model. */
export function runSample(
  model: BigramModel,
  prompt: number[],
  params: WireSamplingParams,
  numSamples: number,
  promptLogprobs: boolean,
  random: () => number,
): SampleResponse {
  const stopTokens = Array.isArray(params.stop) ? params.stop.filter((s): s is number => typeof s === 'number') : [];
  const sequences = Array.from({ length: numSamples }, () => {
    const drawn = model.sample(prompt, params.max_tokens ?? 16, params.temperature ?? 1, random, stopTokens);
    return {
      tokens: drawn.tokens,
      logprobs: drawn.logprobs,
      stop_reason: drawn.stop ? ('stop' as const) : ('length' as const),
    };
  });
  const response: SampleResponse = { type: 'sample', sequences, prompt_cache_hit_tokens: 0 };
  if (promptLogprobs) {
    response.prompt_logprobs = prompt.map((token, i) => (i === 0 ? null : model.logprob(prompt[i - 1]!, token)));
  }
  return response;
}
