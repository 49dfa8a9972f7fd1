import protobuf from 'protobufjs';
import { ValidationError } from '@agl/core/errors';
import type { WireDatum, WireTensor } from './tinker-wire';

/**
 * The protobuf messages of the Tinker SDK (0.25, `proto/tinker_public_pb2.py`) that a server reads and writes: the
 * `forward_backward` request body, and the `SampleResponse` / `ForwardBackwardOutput` results the SDK asks for with
 * `Accept: application/x-protobuf`. Field numbers follow the SDK's serialized descriptor.
 */
const SCHEMA = `
syntax = "proto3";
package tinker_public;
enum StopReason { STOP_REASON_STOP = 0; STOP_REASON_LENGTH = 1; }
enum DType { DTYPE_UNSPECIFIED = 0; DTYPE_FLOAT32 = 1; DTYPE_INT64 = 2; DTYPE_INT32 = 3; DTYPE_BFLOAT16 = 4; }
message EncodedText { bytes tokens = 1; }
message Image { bytes data = 1; string format = 2; int32 expected_tokens = 3; }
message Dmel { bytes dmel = 1; }
message Chunk { oneof chunk { EncodedText encoded_text = 1; Image image = 2; Dmel dmel = 3; } }
message SparseCsr { bytes values = 1; bytes crow_indices = 2; bytes col_indices = 3; }
message Tensor { oneof encoding { bytes dense = 1; SparseCsr sparse_csr = 2; } DType dtype = 3; repeated int64 shape = 4; }
message Datum { repeated Chunk model_input = 1; map<string, Tensor> loss_fn_inputs = 2; }
message ForwardBackwardRequest {
  string model_id = 1; int32 seq_id = 2; repeated Datum data = 3; string loss_fn = 4;
  map<string, double> loss_fn_config = 5; bool forward_only = 6;
}
message SampledSequence { StopReason stop_reason = 1; bytes tokens = 2; optional bytes logprobs = 3; }
message TopkPromptLogprobs { bytes token_ids = 1; bytes logprobs = 2; int32 k = 3; int32 prompt_length = 4; }
message SampleResponse {
  repeated SampledSequence sequences = 1; optional bytes prompt_logprobs = 2;
  optional TopkPromptLogprobs topk_prompt_logprobs = 3; int32 prompt_cache_hit_tokens = 4;
}
message BatchedTensor { bytes data = 1; bytes offsets = 2; DType dtype = 3; repeated int64 trailing_shape = 4; }
message ArrayRecord { string type_tag = 1; map<string, BatchedTensor> fields = 2; int32 num_datums = 3; }
message ForwardBackwardOutput {
  string loss_fn_output_type = 1; repeated ArrayRecord loss_fn_outputs = 2; map<string, double> metrics = 3;
}
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const T = (name: string): protobuf.Type => root.lookupType(`tinker_public.${name}`);
const FwdBwdRequest = T('ForwardBackwardRequest');
const SampleResponseMsg = T('SampleResponse');
const FwdBwdOutputMsg = T('ForwardBackwardOutput');

/** The proto content type. */
export const PROTO_CONTENT_TYPE = 'application/x-protobuf';

/** A decoded `forward_backward` body, in the JSON request's shape (so one code path serves both). */
export interface DecodedForwardBackward {
  model_id: string;
  seq_id: number;
  forward_backward_input: { data: WireDatum[]; loss_fn: string; loss_fn_config?: Record<string, number> };
  forward_only: boolean;
}

const DTYPE_NAMES: Record<number, WireTensor['dtype']> = { 1: 'float32', 2: 'int64', 3: 'int64' };

function bytesToNumbers(b: Uint8Array, dtype: number, what: string): number[] {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const size = dtype === 2 ? 8 : 4;
  if (buf.length % size !== 0)
    throw new ValidationError(`${what}: ${buf.length} bytes is not a whole number of ${size}-byte values.`, [], {
      status: 400,
    });
  const out: number[] = [];
  for (let i = 0; i < buf.length; i += size) {
    if (dtype === 1) out.push(buf.readFloatLE(i));
    else if (dtype === 2) out.push(Number(buf.readBigInt64LE(i)));
    else if (dtype === 3) out.push(buf.readInt32LE(i));
    else
      throw new ValidationError(`${what}: dtype ${dtype} is not supported; send float32, int64 or int32.`, [], {
        status: 400,
      });
  }
  return out;
}

/** Decodes a protobuf `ForwardBackwardRequest` (dense and sparse CSR tensors, encoded-text chunks). */
export function decodeForwardBackward(body: Buffer): DecodedForwardBackward {
  let msg: Record<string, unknown>;
  try {
    msg = FwdBwdRequest.toObject(FwdBwdRequest.decode(body), { defaults: true, oneofs: true, longs: Number }) as Record<
      string,
      unknown
    >;
  } catch (err) {
    throw new ValidationError(
      `body: is not a protobuf tinker_public.ForwardBackwardRequest (${(err as Error).message}).`,
      [],
      { status: 400 },
    );
  }
  const data = (msg.data as Array<Record<string, unknown>>).map((d, i): WireDatum => {
    const chunks = (d.model_input as Array<Record<string, unknown>>).map((c, j) => {
      const text = c.encoded_text as { tokens: Uint8Array } | undefined;
      if (!text)
        throw new ValidationError(
          `data[${i}].model_input[${j}]: only encoded_text chunks are supported by this model (no images or audio).`,
          [],
          { status: 400 },
        );
      return { type: 'encoded_text' as const, tokens: bytesToNumbers(text.tokens, 3, `data[${i}].model_input[${j}]`) };
    });
    const inputs: Record<string, WireTensor> = {};
    for (const [name, t] of Object.entries(d.loss_fn_inputs as Record<string, Record<string, unknown>>)) {
      const dtype = t.dtype as number;
      const what = `data[${i}].loss_fn_inputs.${name}`;
      const shape = (t.shape as number[]).length > 0 ? (t.shape as number[]) : undefined;
      const sparse = t.sparse_csr as { values: Uint8Array; crow_indices: Uint8Array; col_indices: Uint8Array } | null;
      if (sparse && t.encoding === 'sparse_csr') {
        inputs[name] = {
          dtype: DTYPE_NAMES[dtype] ?? 'float32',
          data: bytesToNumbers(sparse.values, dtype, what),
          shape,
          sparse_crow_indices: bytesToNumbers(sparse.crow_indices, 2, what),
          sparse_col_indices: bytesToNumbers(sparse.col_indices, 2, what),
        };
      } else {
        inputs[name] = {
          dtype: DTYPE_NAMES[dtype] ?? 'float32',
          data: bytesToNumbers(t.dense as Uint8Array, dtype, what),
          shape,
        };
      }
    }
    return { model_input: { chunks }, loss_fn_inputs: inputs };
  });
  const config = msg.loss_fn_config as Record<string, number>;
  return {
    model_id: msg.model_id as string,
    seq_id: msg.seq_id as number,
    forward_backward_input: {
      data,
      loss_fn: msg.loss_fn as string,
      ...(Object.keys(config).length > 0 ? { loss_fn_config: config } : {}),
    },
    forward_only: msg.forward_only as boolean,
  };
}

function f32(values: readonly number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeFloatLE(v, i * 4));
  return b;
}

function i32(values: readonly number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeInt32LE(v, i * 4));
  return b;
}

/** A sample result as the JSON `SampleResponse` has it. */
export interface SampleResult {
  sequences: Array<{ tokens: number[]; logprobs: number[]; stop_reason: 'stop' | 'length' }>;
  prompt_logprobs?: Array<number | null>;
  prompt_cache_hit_tokens: number;
}

/** Encodes a `SampleResponse` (`prompt_logprobs` NaN = None, as the SDK reads it). */
export function encodeSampleResponse(r: SampleResult): Buffer {
  const msg = SampleResponseMsg.fromObject({
    sequences: r.sequences.map((s) => ({
      stop_reason: s.stop_reason === 'length' ? 1 : 0,
      tokens: i32(s.tokens),
      logprobs: f32(s.logprobs),
    })),
    ...(r.prompt_logprobs ? { prompt_logprobs: f32(r.prompt_logprobs.map((x) => x ?? Number.NaN)) } : {}),
    prompt_cache_hit_tokens: r.prompt_cache_hit_tokens,
  });
  return Buffer.from(SampleResponseMsg.encode(msg).finish());
}

/** Encodes a `ForwardBackwardOutput` as one batched `ArrayRecord` of float32 fields (what the SDK's v1 reader takes). */
export function encodeForwardBackwardOutput(r: {
  outputs: Array<Record<string, number[]>>;
  metrics: Record<string, number>;
}): Buffer {
  const names = Object.keys(r.outputs[0] ?? {});
  const fields: Record<string, unknown> = {};
  for (const name of names) {
    const offsets = Buffer.alloc((r.outputs.length + 1) * 8);
    let at = 0;
    r.outputs.forEach((o, i) => {
      at += o[name]!.length * 4;
      offsets.writeBigInt64LE(BigInt(at), (i + 1) * 8);
    });
    fields[name] = { data: f32(r.outputs.flatMap((o) => o[name]!)), offsets, dtype: 1, trailing_shape: [] };
  }
  const msg = FwdBwdOutputMsg.fromObject({
    loss_fn_output_type: 'ArrayRecord',
    loss_fn_outputs: r.outputs.length === 0 ? [] : [{ type_tag: 'ArrayRecord', fields, num_datums: r.outputs.length }],
    metrics: r.metrics,
  });
  return Buffer.from(FwdBwdOutputMsg.encode(msg).finish());
}

/** Test helpers: the opposite directions (what the SDK does), so tests can speak the wire without the SDK. */
export const protoForTests = {
  encodeForwardBackward(req: DecodedForwardBackward): Buffer {
    const msg = FwdBwdRequest.fromObject({
      model_id: req.model_id,
      seq_id: req.seq_id,
      loss_fn: req.forward_backward_input.loss_fn,
      loss_fn_config: req.forward_backward_input.loss_fn_config ?? {},
      forward_only: req.forward_only,
      data: req.forward_backward_input.data.map((d) => ({
        model_input: d.model_input.chunks.map((c) => ({ encoded_text: { tokens: i32(c.tokens) } })),
        loss_fn_inputs: Object.fromEntries(
          Object.entries(d.loss_fn_inputs).map(([k, t]) => {
            const int = t.dtype === 'int64';
            const b = Buffer.alloc(t.data.length * (int ? 8 : 4));
            t.data.forEach((v, i) => (int ? b.writeBigInt64LE(BigInt(v), i * 8) : b.writeFloatLE(v, i * 4)));
            return [k, { dense: b, dtype: int ? 2 : 1, shape: t.shape ?? [t.data.length] }];
          }),
        ),
      })),
    });
    return Buffer.from(FwdBwdRequest.encode(msg).finish());
  },
  decodeSampleResponse(body: Buffer): SampleResult {
    const m = SampleResponseMsg.toObject(SampleResponseMsg.decode(body), { defaults: true }) as {
      sequences: Array<{ stop_reason: number; tokens: Uint8Array; logprobs: Uint8Array }>;
      prompt_cache_hit_tokens: number;
    };
    return {
      sequences: m.sequences.map((s) => ({
        stop_reason: s.stop_reason === 1 ? 'length' : 'stop',
        tokens: bytesToNumbers(s.tokens, 3, 'tokens'),
        logprobs: bytesToNumbers(s.logprobs, 1, 'logprobs'),
      })),
      prompt_cache_hit_tokens: m.prompt_cache_hit_tokens,
    };
  },
  decodeForwardBackwardOutput(body: Buffer): {
    outputs: Array<Record<string, number[]>>;
    metrics: Record<string, number>;
  } {
    const m = FwdBwdOutputMsg.toObject(FwdBwdOutputMsg.decode(body), { defaults: true, longs: Number }) as {
      loss_fn_outputs: Array<{ fields: Record<string, { data: Uint8Array; offsets: Uint8Array }>; num_datums: number }>;
      metrics: Record<string, number>;
    };
    const outputs: Array<Record<string, number[]>> = [];
    for (const rec of m.loss_fn_outputs) {
      for (let i = 0; i < rec.num_datums; i++) outputs.push({});
      for (const [name, bt] of Object.entries(rec.fields)) {
        const all = bytesToNumbers(bt.data, 1, name);
        const offsets = bytesToNumbers(bt.offsets, 2, name);
        for (let i = 0; i + 1 < offsets.length; i++)
          outputs[outputs.length - rec.num_datums + i]![name] = all.slice(offsets[i]! / 4, offsets[i + 1]! / 4);
      }
    }
    return { outputs, metrics: m.metrics };
  },
};
