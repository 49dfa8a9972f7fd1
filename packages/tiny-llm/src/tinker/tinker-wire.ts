import { ValidationError } from '@agl/core/errors';
import type { PrimitiveDatum } from '../train/primitive-steps';

/** Tinker's `TensorData` on the JSON wire (`types/tensor_data.py`). */
export interface WireTensor {
  data: number[];
  dtype: 'int64' | 'float32';
  shape?: number[];
  sparse_crow_indices?: number[];
  sparse_col_indices?: number[];
}

/** Tinker's `ModelInput` on the JSON wire. */
export interface WireModelInput {
  chunks: Array<{ type?: string; tokens: number[] }>;
}

/** Tinker's `Datum` on the JSON wire. */
export interface WireDatum {
  model_input: WireModelInput;
  loss_fn_inputs: Record<string, WireTensor>;
}

/** A 400 naming the field and the fix. */
export function badField(field: string, message: string): ValidationError {
  return new ValidationError(`${field}: ${message}`, [{ path: field, message }], { status: 400 });
}

/** Reads a required string field. */
export function str(body: Record<string, unknown>, key: string, where = ''): string {
  const v = body[key];
  if (typeof v !== 'string' || v === '') throw badField(`${where}${key}`, 'is required, a non-empty string.');
  return v;
}

/** Reads an optional integer field. */
export function optInt(body: Record<string, unknown>, key: string, where = ''): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw badField(`${where}${key}`, `must be an integer, got ${JSON.stringify(v)}.`);
  return v;
}

/** The body as an object (400 otherwise). */
export function asObject(v: unknown, field = 'body'): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badField(field, 'must be a JSON object.');
  return v as Record<string, unknown>;
}

/** The token ids of a `ModelInput` (encoded-text chunks only: the embedded policy reads no images). */
export function modelInputTokens(v: unknown, field: string): number[] {
  const mi = asObject(v, field);
  if (!Array.isArray(mi.chunks))
    throw badField(`${field}.chunks`, 'is required, a list of {"type":"encoded_text","tokens":[…]}.');
  return (mi.chunks as unknown[]).flatMap((c, j) => {
    const chunk = asObject(c, `${field}.chunks[${j}]`);
    if (chunk.type !== undefined && chunk.type !== 'encoded_text')
      throw badField(
        `${field}.chunks[${j}].type`,
        `"${String(chunk.type)}" is not supported; this model reads encoded_text chunks only.`,
      );
    if (!Array.isArray(chunk.tokens) || !chunk.tokens.every((t) => Number.isInteger(t)))
      throw badField(`${field}.chunks[${j}].tokens`, 'is required, a list of integer token ids.');
    return chunk.tokens as number[];
  });
}

/** A `TensorData` as a flat dense list (sparse CSR expanded). */
export function denseValues(v: unknown, field: string): number[] {
  const t = asObject(v, field);
  if (!Array.isArray(t.data) || !t.data.every((x) => typeof x === 'number' || x === null))
    throw badField(`${field}.data`, 'is required, a flat list of numbers.');
  const data = (t.data as Array<number | null>).map((x) => (x === null ? Number.NaN : x));
  if (!Array.isArray(t.sparse_crow_indices)) return data;
  const crow = t.sparse_crow_indices as number[];
  const col = t.sparse_col_indices as number[] | undefined;
  const shape = t.shape as number[] | undefined;
  if (!Array.isArray(col) || !Array.isArray(shape) || shape.length !== 2)
    throw badField(field, 'a sparse CSR tensor needs sparse_col_indices and a 2-D shape.');
  const [rows, cols] = shape as [number, number];
  const out = new Array<number>(rows * cols).fill(0);
  for (let r = 0; r < rows; r++) for (let k = crow[r]!; k < crow[r + 1]!; k++) out[r * cols + col[k]!] = data[k]!;
  return out;
}

/** A wire datum → the trainer's datum (known loss inputs; unknown ones are refused, naming them). */
export function toPrimitiveDatum(v: unknown, i: number): PrimitiveDatum {
  const field = `forward_backward_input.data[${i}]`;
  const d = asObject(v, field);
  const tokens = modelInputTokens(d.model_input, `${field}.model_input`);
  const inputs = asObject(d.loss_fn_inputs ?? {}, `${field}.loss_fn_inputs`);
  const known = ['target_tokens', 'weights', 'logprobs', 'advantages'];
  for (const k of Object.keys(inputs))
    if (!known.includes(k))
      throw badField(
        `${field}.loss_fn_inputs.${k}`,
        `is not an input this model's losses read; send ${known.join(', ')}.`,
      );
  const read = (k: string): number[] | undefined =>
    inputs[k] === undefined ? undefined : denseValues(inputs[k], `${field}.loss_fn_inputs.${k}`);
  const targetTokens = read('target_tokens');
  if (!targetTokens)
    throw badField(`${field}.loss_fn_inputs.target_tokens`, 'is required (int64, one per input token).');
  return {
    tokens,
    targetTokens,
    weights: read('weights'),
    logprobs: read('logprobs'),
    advantages: read('advantages'),
  };
}

/** A float32 `TensorData` for a result. */
export function f32Tensor(values: readonly number[]): WireTensor {
  return { data: [...values], dtype: 'float32', shape: [values.length] };
}
