import type { Datum, TensorData } from '../types/tinker-types';
import { normalizeDatum } from '../types/datum-builders';
import {
  PROTO_DTYPE,
  float32Bytes,
  int32Bytes,
  int64Bytes,
  longToNumber,
  readFloat32,
  readInt32,
  readInt64,
  tinkerProto,
} from './tinker-public-proto';

/** A forward_backward request as the SDK builds it before encoding. */
export interface ForwardBackwardRequestFields {
  model_id: string;
  seq_id: number;
  data: Datum[];
  loss_fn: string;
  loss_fn_config?: Record<string, number>;
  forward_only: boolean;
}

function tensorToProto(tensor: TensorData): Record<string, unknown> {
  const dtype = tensor.dtype === 'int64' ? PROTO_DTYPE.INT64 : PROTO_DTYPE.FLOAT32;
  const values = tensor.dtype === 'int64' ? int64Bytes(tensor.data) : float32Bytes(tensor.data);
  const message: Record<string, unknown> = { dtype, shape: tensor.shape ?? [] };
  if (tensor.sparse_crow_indices) {
    message.sparse_csr = {
      values,
      crow_indices: int64Bytes(tensor.sparse_crow_indices),
      col_indices: int64Bytes(tensor.sparse_col_indices ?? []),
    };
  } else {
    message.dense = values;
  }
  return message;
}

/**
 * Encodes a forward_backward request as `tinker_public.ForwardBackwardRequest` (SDK `proto/request_conv.py`): tokens
 * as int32 bytes, float32 / int64 tensors as dense bytes or sparse CSR with int64 indices.
 */
export function encodeForwardBackwardRequest(request: ForwardBackwardRequestFields): Uint8Array {
  const message = tinkerProto.ForwardBackwardRequest.fromObject({
    model_id: request.model_id,
    seq_id: request.seq_id,
    loss_fn: request.loss_fn,
    loss_fn_config: request.loss_fn_config ?? {},
    forward_only: request.forward_only,
    data: request.data.map((datum, i) => {
      const normalized = normalizeDatum(datum, i);
      return {
        model_input: normalized.model_input.chunks.map((chunk) => ({
          encoded_text: { tokens: int32Bytes(chunk.tokens) },
        })),
        loss_fn_inputs: Object.fromEntries(
          Object.entries(normalized.loss_fn_inputs).map(([name, tensor]) => [name, tensorToProto(tensor)]),
        ),
      };
    }),
  });
  return tinkerProto.ForwardBackwardRequest.encode(message).finish();
}

interface ProtoTensor {
  dense?: Uint8Array;
  sparse_csr?: { values?: Uint8Array; crow_indices?: Uint8Array; col_indices?: Uint8Array };
  dtype?: number;
  shape?: unknown[];
}

function tensorFromProto(name: string, tensor: ProtoTensor): TensorData {
  const dtype = tensor.dtype === PROTO_DTYPE.INT64 ? 'int64' : tensor.dtype === PROTO_DTYPE.FLOAT32 ? 'float32' : null;
  if (!dtype) throw new Error(`loss_fn_inputs.${name}: unsupported dtype ${tensor.dtype ?? 0}; use FLOAT32 or INT64`);
  const read = (bytes: Uint8Array | undefined) =>
    bytes ? (dtype === 'int64' ? readInt64(bytes) : readFloat32(bytes)) : [];
  const shape = (tensor.shape ?? []).map(longToNumber);
  const out: TensorData = { data: [], dtype };
  if (shape.length > 0) out.shape = shape;
  if (tensor.sparse_csr) {
    out.data = read(tensor.sparse_csr.values);
    out.sparse_crow_indices = readInt64(tensor.sparse_csr.crow_indices ?? new Uint8Array());
    out.sparse_col_indices = readInt64(tensor.sparse_csr.col_indices ?? new Uint8Array());
  } else {
    out.data = read(tensor.dense);
  }
  return out;
}

/** Decodes a `tinker_public.ForwardBackwardRequest` (what a Tinker server does with the SDK's body). */
export function decodeForwardBackwardRequest(bytes: Uint8Array): ForwardBackwardRequestFields {
  const message = tinkerProto.ForwardBackwardRequest.decode(bytes) as unknown as {
    model_id: string;
    seq_id: number;
    loss_fn: string;
    loss_fn_config: Record<string, number>;
    forward_only: boolean;
    data: {
      model_input: { encoded_text?: { tokens: Uint8Array }; image?: unknown; dmel?: unknown }[];
      loss_fn_inputs: Record<string, ProtoTensor>;
    }[];
  };
  return {
    model_id: message.model_id,
    seq_id: message.seq_id,
    loss_fn: message.loss_fn,
    loss_fn_config: { ...message.loss_fn_config },
    forward_only: message.forward_only,
    data: message.data.map((datum) => ({
      model_input: {
        chunks: datum.model_input.map((chunk) => {
          if (!chunk.encoded_text) throw new Error('only encoded_text chunks are supported');
          return { type: 'encoded_text' as const, tokens: readInt32(chunk.encoded_text.tokens) };
        }),
      },
      loss_fn_inputs: Object.fromEntries(
        Object.entries(datum.loss_fn_inputs).map(([name, tensor]) => [name, tensorFromProto(name, tensor)]),
      ),
    })),
  };
}
