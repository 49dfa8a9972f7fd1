import { ValidationError, type ValidationIssue } from '@agl/core/errors';
import type { Datum, LossFnType, ModelInput, TensorData, TensorDtype } from './tinker-types';
import { LOSS_FN_TYPES } from './tinker-types';

/** The wire dtype the SDK gives a plain list under each known loss input name (`types/datum.py`). */
export const LOSS_INPUT_DTYPES: Readonly<Record<string, TensorDtype>> = {
  target_tokens: 'int64',
  weights: 'float32',
  advantages: 'float32',
  logprobs: 'float32',
  clip_low_threshold: 'float32',
  clip_high_threshold: 'float32',
};

/**
 * The per-token inputs each loss function needs. `cross_entropy`: target tokens and weights (0 on prompt positions);
 * the policy-gradient losses: target tokens, the sampler's logprobs and per-token advantages. Tinker's docs do not
 * spell `dro`'s inputs out; it is checked like the other policy-gradient losses.
 */
export const REQUIRED_LOSS_INPUTS: Readonly<Record<LossFnType, readonly string[]>> = {
  cross_entropy: ['target_tokens', 'weights'],
  importance_sampling: ['target_tokens', 'logprobs', 'advantages'],
  ppo: ['target_tokens', 'logprobs', 'advantages'],
  cispo: ['target_tokens', 'logprobs', 'advantages'],
  dro: ['target_tokens', 'logprobs', 'advantages'],
};

/** A model input of one token chunk. */
export function modelInputFromTokens(tokens: readonly number[]): ModelInput {
  return { chunks: [{ type: 'encoded_text', tokens: [...tokens] }] };
}

/** All token ids of a model input, chunk after chunk. */
export function modelInputTokens(input: ModelInput): number[] {
  return input.chunks.flatMap((chunk) => chunk.tokens);
}

/** A 1-D tensor of `values` with the given dtype. */
export function tensorData(values: readonly number[], dtype: TensorDtype): TensorData {
  return { data: [...values], dtype, shape: [values.length] };
}

/** The number of elements a tensor stands for (its dense size). */
export function tensorLength(tensor: TensorData): number {
  if (tensor.shape && tensor.shape.length > 0) return tensor.shape.reduce((a, b) => a * b, 1);
  return tensor.data.length;
}

/** The tensor's dense values (expanding a sparse CSR tensor). */
export function denseValues(tensor: TensorData): number[] {
  if (!tensor.sparse_crow_indices) return tensor.data;
  const shape = tensor.shape ?? [];
  const cols = shape[1] ?? 0;
  const out = new Array<number>(tensorLength(tensor)).fill(0);
  const crow = tensor.sparse_crow_indices;
  const col = tensor.sparse_col_indices ?? [];
  for (let row = 0; row + 1 < crow.length; row++) {
    for (let k = crow[row]!; k < crow[row + 1]!; k++) out[row * cols + col[k]!] = tensor.data[k]!;
  }
  return out;
}

/** A datum whose loss inputs are all {@link TensorData}: plain lists take the dtype the SDK gives their name. */
export function normalizeDatum(datum: Datum, index = 0): Datum & { loss_fn_inputs: Record<string, TensorData> } {
  const inputs: Record<string, TensorData> = {};
  for (const [name, value] of Object.entries(datum.loss_fn_inputs ?? {})) {
    if (Array.isArray(value)) {
      const dtype = LOSS_INPUT_DTYPES[name];
      if (!dtype) {
        throw new ValidationError(
          `datum ${index}: loss input "${name}" is a plain list, and Tinker has no default dtype for that name; pass it as TensorData ({ data, dtype: "float32" | "int64" })`,
          [{ path: `data[${index}].loss_fn_inputs.${name}`, message: 'give a dtype' }],
          { status: 400 },
        );
      }
      inputs[name] = tensorData(value, dtype);
    } else {
      inputs[name] = value;
    }
  }
  return { model_input: datum.model_input, loss_fn_inputs: inputs };
}

/**
 * Checks datums against a loss function before anything is sent: the loss is one Tinker knows, each datum has the
 * inputs the loss needs, and every per-token input is as long as the datum's model input. Throws one
 * {@link ValidationError} naming every problem and the call.
 */
export function validateDatums(call: string, data: readonly Datum[], lossFn: string): void {
  const issues: ValidationIssue[] = [];
  if (!(LOSS_FN_TYPES as readonly string[]).includes(lossFn)) {
    issues.push({
      path: 'loss_fn',
      message: `"${lossFn}" is not a Tinker loss; use one of ${LOSS_FN_TYPES.join(', ')}`,
    });
  }
  if (data.length === 0) issues.push({ path: 'data', message: 'give at least one datum' });
  const required = REQUIRED_LOSS_INPUTS[lossFn as LossFnType] ?? [];
  data.forEach((datum, i) => {
    const chunks = datum?.model_input?.chunks;
    if (!Array.isArray(chunks) || chunks.length === 0) {
      issues.push({ path: `data[${i}].model_input`, message: 'give a model input with at least one token chunk' });
      return;
    }
    const length = modelInputTokens(datum.model_input).length;
    const inputs = datum.loss_fn_inputs ?? {};
    for (const name of required) {
      if (!(name in inputs)) {
        issues.push({
          path: `data[${i}].loss_fn_inputs.${name}`,
          message: `${lossFn} needs "${name}" (one per token)`,
        });
      }
    }
    for (const [name, value] of Object.entries(inputs)) {
      const n = Array.isArray(value) ? value.length : tensorLength(value);
      if (n !== length) {
        issues.push({
          path: `data[${i}].loss_fn_inputs.${name}`,
          message: `has ${n} values but the model input has ${length} tokens; give one value per input token`,
        });
      }
    }
  });
  if (issues.length > 0) {
    const first = issues.slice(0, 3).map((issue) => `${issue.path}: ${issue.message}`);
    throw new ValidationError(
      `Tinker ${call}: ${first.join('; ')}${issues.length > 3 ? ` (and ${issues.length - 3} more)` : ''}`,
      issues,
      { status: 400 },
    );
  }
}
