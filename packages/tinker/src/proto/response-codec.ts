import type { ForwardBackwardOutput, SampleResponse, TensorData } from '../types/tinker-types';
import {
  PROTO_DTYPE,
  float32Bytes,
  int32Bytes,
  int64Bytes,
  longToNumber,
  readBfloat16,
  readFloat32,
  readInt32,
  readInt64,
  tinkerProto,
} from './tinker-public-proto';

/** The mask value of an empty top-k cell. */
const TOPK_MASK_LOGPROB = -99999.0;

interface ProtoSampleResponse {
  sequences: { stop_reason?: number; tokens?: Uint8Array; logprobs?: Uint8Array }[];
  prompt_logprobs?: Uint8Array;
  topk_prompt_logprobs?: { token_ids?: Uint8Array; logprobs?: Uint8Array; k?: number; prompt_length?: number };
  prompt_cache_hit_tokens?: number;
}

/** Decodes a `tinker_public.SampleResponse` as SDK 0.25 does (`proto/response_conv.py`); NaN prompt logprobs → null. */
export function decodeSampleResponse(bytes: Uint8Array): SampleResponse {
  const message = tinkerProto.SampleResponse.decode(bytes) as unknown as ProtoSampleResponse;
  const sequences = message.sequences.map((seq) => {
    const stop = seq.stop_reason ?? 0;
    if (stop !== 0 && stop !== 1) throw new Error(`unknown stop_reason enum value ${stop} in SampleResponse`);
    const out: SampleResponse['sequences'][number] = {
      tokens: readInt32(seq.tokens ?? new Uint8Array()),
      stop_reason: stop === 0 ? 'stop' : 'length',
    };
    if (seq.logprobs && seq.logprobs.byteLength > 0) out.logprobs = readFloat32(seq.logprobs);
    return out;
  });
  const response: SampleResponse = {
    type: 'sample',
    sequences,
    prompt_cache_hit_tokens: message.prompt_cache_hit_tokens ?? 0,
  };
  if (message.prompt_logprobs && message.prompt_logprobs.byteLength > 0) {
    response.prompt_logprobs = readFloat32(message.prompt_logprobs).map((v) => (Number.isNaN(v) ? null : v));
  }
  const topk = message.topk_prompt_logprobs;
  if (topk && (topk.k ?? 0) > 0 && (topk.prompt_length ?? 0) > 0) {
    const k = topk.k!;
    const ids = readInt32(topk.token_ids ?? new Uint8Array());
    const lps = readFloat32(topk.logprobs ?? new Uint8Array());
    response.topk_prompt_logprobs = Array.from({ length: topk.prompt_length! }, (_, i) => {
      const row: [number, number][] = [];
      for (let j = 0; j < k; j++) {
        const lp = lps[i * k + j]!;
        if (lp !== TOPK_MASK_LOGPROB) row.push([ids[i * k + j]!, lp]);
      }
      return row.length > 0 ? row : null;
    });
  }
  return response;
}

/** Encodes a sample result as `tinker_public.SampleResponse` (what a Tinker server answers for `Accept: x-protobuf`). */
export function encodeSampleResponse(response: SampleResponse): Uint8Array {
  const message: Record<string, unknown> = {
    sequences: response.sequences.map((seq) => ({
      stop_reason: seq.stop_reason === 'length' ? 1 : 0,
      tokens: int32Bytes(seq.tokens),
      ...(seq.logprobs ? { logprobs: float32Bytes(seq.logprobs) } : {}),
    })),
    prompt_cache_hit_tokens: response.prompt_cache_hit_tokens ?? 0,
  };
  if (response.prompt_logprobs) {
    message.prompt_logprobs = float32Bytes(response.prompt_logprobs.map((v) => (v === null ? Number.NaN : v)));
  }
  if (response.topk_prompt_logprobs) {
    const rows = response.topk_prompt_logprobs;
    const k = Math.max(0, ...rows.map((row) => row?.length ?? 0));
    const ids: number[] = [];
    const lps: number[] = [];
    for (const row of rows) {
      for (let j = 0; j < k; j++) {
        ids.push(row?.[j]?.[0] ?? 0);
        lps.push(row?.[j]?.[1] ?? TOPK_MASK_LOGPROB);
      }
    }
    message.topk_prompt_logprobs = {
      token_ids: int32Bytes(ids),
      logprobs: float32Bytes(lps),
      k,
      prompt_length: rows.length,
    };
  }
  return tinkerProto.SampleResponse.encode(tinkerProto.SampleResponse.fromObject(message)).finish();
}

interface ProtoBatchedTensor {
  data?: Uint8Array;
  offsets?: Uint8Array;
  dtype?: number;
  trailing_shape?: unknown[];
}

function readBatched(bt: ProtoBatchedTensor): { values: number[]; itemSize: number } {
  const data = bt.data ?? new Uint8Array();
  switch (bt.dtype) {
    case PROTO_DTYPE.FLOAT32:
      return { values: readFloat32(data), itemSize: 4 };
    case PROTO_DTYPE.INT64:
      return { values: readInt64(data), itemSize: 8 };
    case PROTO_DTYPE.INT32:
      return { values: readInt32(data), itemSize: 4 };
    case PROTO_DTYPE.BFLOAT16:
      return { values: readBfloat16(data), itemSize: 2 };
    default:
      throw new Error(`unsupported proto DType value ${bt.dtype ?? 0}`);
  }
}

/**
 * Decodes a `tinker_public.ForwardBackwardOutput` as SDK 0.25 does: each ArrayRecord's batched tensors are sliced
 * per datum by their byte offsets; int32 widens to int64 and bfloat16 to float32; leading dim = elements / trailing.
 */
export function decodeForwardBackwardOutput(bytes: Uint8Array): ForwardBackwardOutput {
  const message = tinkerProto.ForwardBackwardOutput.decode(bytes) as unknown as {
    loss_fn_output_type?: string;
    loss_fn_outputs: { type_tag?: string; fields: Record<string, ProtoBatchedTensor>; num_datums?: unknown }[];
    metrics: Record<string, number>;
  };
  const metrics = { ...message.metrics };
  if (message.loss_fn_outputs.length === 0) {
    return { loss_fn_output_type: message.loss_fn_output_type || 'ArrayRecord', loss_fn_outputs: [], metrics };
  }
  const className = (message.loss_fn_output_type ?? '').split(':').pop() ?? '';
  const perField = new Map<string, TensorData[]>();
  let numDatums = 0;
  for (const record of message.loss_fn_outputs) {
    numDatums += longToNumber(record.num_datums);
    for (const [name, bt] of Object.entries(record.fields)) {
      const { values, itemSize } = readBatched(bt);
      const offsets = readInt64(bt.offsets ?? new Uint8Array());
      const trailing = (bt.trailing_shape ?? []).map(longToNumber);
      const trailingElems = trailing.reduce((a, b) => a * b, 1);
      const dtype = bt.dtype === PROTO_DTYPE.FLOAT32 || bt.dtype === PROTO_DTYPE.BFLOAT16 ? 'float32' : 'int64';
      const list = perField.get(name) ?? [];
      for (let i = 0; i + 1 < offsets.length; i++) {
        const slice = values.slice(offsets[i]! / itemSize, offsets[i + 1]! / itemSize);
        const leading = trailingElems ? Math.floor(slice.length / trailingElems) : 0;
        list.push({ data: slice, dtype, shape: [leading, ...trailing] });
      }
      perField.set(name, list);
    }
  }
  if (numDatums === 0 && perField.size > 0) numDatums = perField.values().next().value!.length;
  const outputs = Array.from({ length: numDatums }, (_, i) => {
    const datum: Record<string, TensorData> = {};
    for (const [name, list] of perField) if (list[i]) datum[name] = list[i]!;
    return datum;
  });
  return { loss_fn_output_type: className, loss_fn_outputs: outputs, metrics };
}

/** Encodes a forward(-backward) result as one batched `ArrayRecord` (what a Tinker server answers in proto). */
export function encodeForwardBackwardOutput(output: ForwardBackwardOutput): Uint8Array {
  const names = new Set(output.loss_fn_outputs.flatMap((datum) => Object.keys(datum)));
  const fields: Record<string, unknown> = {};
  for (const name of names) {
    const tensors = output.loss_fn_outputs.map((datum) => datum[name] ?? { data: [], dtype: 'float32' as const });
    const dtype = tensors[0]!.dtype;
    const itemSize = dtype === 'int64' ? 8 : 4;
    const offsets = [0];
    for (const tensor of tensors) offsets.push(offsets[offsets.length - 1]! + tensor.data.length * itemSize);
    const all = tensors.flatMap((tensor) => tensor.data);
    fields[name] = {
      data: dtype === 'int64' ? int64Bytes(all) : float32Bytes(all),
      offsets: int64Bytes(offsets),
      dtype: dtype === 'int64' ? PROTO_DTYPE.INT64 : PROTO_DTYPE.FLOAT32,
      trailing_shape: (tensors[0]!.shape ?? []).slice(1),
    };
  }
  const message = tinkerProto.ForwardBackwardOutput.fromObject({
    loss_fn_output_type: output.loss_fn_output_type,
    loss_fn_outputs: [{ type_tag: output.loss_fn_output_type, fields, num_datums: output.loss_fn_outputs.length }],
    metrics: output.metrics,
  });
  return tinkerProto.ForwardBackwardOutput.encode(message).finish();
}
