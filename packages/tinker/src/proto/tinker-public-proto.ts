import protobuf from 'protobufjs';

/**
 * The `tinker_public` protobuf schema of the Tinker SDK 0.25.0, field for field as the serialized descriptor in
 * `tinker/proto/tinker_public_pb2.py` defines it (proto3). Tokens, logprobs and tensors travel as little-endian byte
 * arrays (int32 tokens, float32 logprobs, int64 CSR indices and batched-tensor offsets).
 */
const SCHEMA = {
  nested: {
    tinker_public: {
      nested: {
        StopReason: { values: { STOP_REASON_STOP: 0, STOP_REASON_LENGTH: 1 } },
        DType: {
          values: { DTYPE_UNSPECIFIED: 0, DTYPE_FLOAT32: 1, DTYPE_INT64: 2, DTYPE_INT32: 3, DTYPE_BFLOAT16: 4 },
        },
        SampleResponse: {
          oneofs: {
            _prompt_logprobs: { oneof: ['prompt_logprobs'] },
            _topk_prompt_logprobs: { oneof: ['topk_prompt_logprobs'] },
          },
          fields: {
            sequences: { rule: 'repeated', type: 'SampledSequence', id: 1 },
            prompt_logprobs: { type: 'bytes', id: 2 },
            topk_prompt_logprobs: { type: 'TopkPromptLogprobs', id: 3 },
            prompt_cache_hit_tokens: { type: 'int32', id: 4 },
          },
        },
        SampledSequence: {
          oneofs: { _logprobs: { oneof: ['logprobs'] } },
          fields: {
            stop_reason: { type: 'StopReason', id: 1 },
            tokens: { type: 'bytes', id: 2 },
            logprobs: { type: 'bytes', id: 3 },
          },
        },
        TopkPromptLogprobs: {
          fields: {
            token_ids: { type: 'bytes', id: 1 },
            logprobs: { type: 'bytes', id: 2 },
            k: { type: 'uint32', id: 3 },
            prompt_length: { type: 'uint32', id: 4 },
          },
        },
        SparseCsr: {
          fields: {
            values: { type: 'bytes', id: 1 },
            crow_indices: { type: 'bytes', id: 2 },
            col_indices: { type: 'bytes', id: 3 },
          },
        },
        Tensor: {
          oneofs: { encoding: { oneof: ['dense', 'sparse_csr'] } },
          fields: {
            dense: { type: 'bytes', id: 1 },
            sparse_csr: { type: 'SparseCsr', id: 2 },
            dtype: { type: 'DType', id: 3 },
            shape: { rule: 'repeated', type: 'int64', id: 4 },
          },
        },
        BatchedTensor: {
          fields: {
            data: { type: 'bytes', id: 1 },
            offsets: { type: 'bytes', id: 2 },
            dtype: { type: 'DType', id: 3 },
            trailing_shape: { rule: 'repeated', type: 'int64', id: 4 },
          },
        },
        ArrayRecord: {
          fields: {
            type_tag: { type: 'string', id: 1 },
            fields: { keyType: 'string', type: 'BatchedTensor', id: 2 },
            num_datums: { type: 'int64', id: 3 },
          },
        },
        ForwardBackwardOutput: {
          fields: {
            loss_fn_output_type: { type: 'string', id: 1 },
            loss_fn_outputs: { rule: 'repeated', type: 'ArrayRecord', id: 2 },
            metrics: { keyType: 'string', type: 'double', id: 3 },
          },
        },
        ForwardBackwardRequest: {
          fields: {
            model_id: { type: 'string', id: 1 },
            seq_id: { type: 'int32', id: 2 },
            data: { rule: 'repeated', type: 'Datum', id: 3 },
            loss_fn: { type: 'string', id: 4 },
            loss_fn_config: { keyType: 'string', type: 'double', id: 5 },
            forward_only: { type: 'bool', id: 6 },
          },
        },
        Datum: {
          fields: {
            model_input: { rule: 'repeated', type: 'Chunk', id: 1 },
            loss_fn_inputs: { keyType: 'string', type: 'Tensor', id: 2 },
          },
        },
        Chunk: {
          oneofs: { chunk: { oneof: ['encoded_text', 'image', 'dmel'] } },
          fields: {
            encoded_text: { type: 'EncodedTextChunk', id: 1 },
            image: { type: 'ImageChunk', id: 2 },
            dmel: { type: 'DmelChunk', id: 3 },
          },
        },
        EncodedTextChunk: { fields: { tokens: { type: 'bytes', id: 1 } } },
        ImageChunk: {
          oneofs: { _expected_tokens: { oneof: ['expected_tokens'] } },
          fields: {
            data: { type: 'bytes', id: 1 },
            format: { type: 'string', id: 2 },
            expected_tokens: { type: 'int32', id: 3 },
          },
        },
        DmelChunk: { fields: { dmel: { type: 'bytes', id: 1 } } },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(SCHEMA);

/** The protobufjs message types of `tinker_public`. */
export const tinkerProto = {
  ForwardBackwardRequest: root.lookupType('tinker_public.ForwardBackwardRequest'),
  ForwardBackwardOutput: root.lookupType('tinker_public.ForwardBackwardOutput'),
  SampleResponse: root.lookupType('tinker_public.SampleResponse'),
};

/** `DType` enum values. */
export const PROTO_DTYPE = { FLOAT32: 1, INT64: 2, INT32: 3, BFLOAT16: 4 } as const;

/** The media type of protobuf bodies. */
export const PROTOBUF_CONTENT_TYPE = 'application/x-protobuf';

/** Little-endian int32 bytes. */
export function int32Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setInt32(i * 4, v, true));
  return out;
}

/** Little-endian float32 bytes. */
export function float32Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return out;
}

/** Little-endian int64 bytes. */
export function int64Bytes(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 8);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setBigInt64(i * 8, BigInt(Math.trunc(v)), true));
  return out;
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Reads little-endian int32 values. */
export function readInt32(bytes: Uint8Array): number[] {
  const view = viewOf(bytes);
  return Array.from({ length: Math.floor(bytes.byteLength / 4) }, (_, i) => view.getInt32(i * 4, true));
}

/** Reads little-endian float32 values. */
export function readFloat32(bytes: Uint8Array): number[] {
  const view = viewOf(bytes);
  return Array.from({ length: Math.floor(bytes.byteLength / 4) }, (_, i) => view.getFloat32(i * 4, true));
}

/** Reads little-endian int64 values (as numbers). */
export function readInt64(bytes: Uint8Array): number[] {
  const view = viewOf(bytes);
  return Array.from({ length: Math.floor(bytes.byteLength / 8) }, (_, i) => Number(view.getBigInt64(i * 8, true)));
}

/** Reads bfloat16 values (the upper 16 bits of a float32). */
export function readBfloat16(bytes: Uint8Array): number[] {
  const view = viewOf(bytes);
  const scratch = new DataView(new ArrayBuffer(4));
  return Array.from({ length: Math.floor(bytes.byteLength / 2) }, (_, i) => {
    scratch.setUint32(0, view.getUint16(i * 2, true) << 16, false);
    return scratch.getFloat32(0, false);
  });
}

/** A protobufjs int64 (number or Long) as a number. */
export function longToNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value && typeof value === 'object' && 'toNumber' in value) return (value as { toNumber(): number }).toNumber();
  return Number(value ?? 0);
}
