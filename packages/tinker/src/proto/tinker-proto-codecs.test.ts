import { describe, expect, it } from 'vitest';
import { decodeForwardBackwardRequest, encodeForwardBackwardRequest } from './forward-backward-request-codec';
import {
  decodeForwardBackwardOutput,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
} from './response-codec';
import { tinkerProto } from './tinker-public-proto';

describe('tinker_public protobuf codecs', () => {
  it('encodes a forward_backward request as the SDK does: int32 tokens, int64 targets, float32 weights', () => {
    const bytes = encodeForwardBackwardRequest({
      model_id: 's:train:0',
      seq_id: 3,
      loss_fn: 'cross_entropy',
      forward_only: false,
      data: [
        {
          model_input: { chunks: [{ type: 'encoded_text', tokens: [5, 70000, 9] }] },
          loss_fn_inputs: { target_tokens: [70000, 9, 2], weights: [0, 1, 0.5] },
        },
      ],
    });
    const raw = tinkerProto.ForwardBackwardRequest.decode(bytes) as unknown as {
      data: {
        model_input: { encoded_text: { tokens: Uint8Array } }[];
        loss_fn_inputs: Record<string, { dense: Uint8Array; dtype: number }>;
      }[];
    };
    expect(Buffer.from(raw.data[0]!.model_input[0]!.encoded_text.tokens).toString('hex')).toBe(
      '0500000070110100' + '09000000',
    );
    expect(raw.data[0]!.loss_fn_inputs.target_tokens!.dtype).toBe(2);
    expect(raw.data[0]!.loss_fn_inputs.target_tokens!.dense.byteLength).toBe(24);
    expect(raw.data[0]!.loss_fn_inputs.weights!.dtype).toBe(1);
    const back = decodeForwardBackwardRequest(bytes);
    expect(back).toMatchObject({ model_id: 's:train:0', seq_id: 3, loss_fn: 'cross_entropy', forward_only: false });
    expect(back.data[0]!.model_input.chunks[0]!.tokens).toEqual([5, 70000, 9]);
    expect(back.data[0]!.loss_fn_inputs.target_tokens).toEqual({ data: [70000, 9, 2], dtype: 'int64', shape: [3] });
    expect(back.data[0]!.loss_fn_inputs.weights).toEqual({ data: [0, 1, 0.5], dtype: 'float32', shape: [3] });
  });

  it('round-trips a sample response, with NaN prompt logprobs as null and masked top-k cells dropped', () => {
    const bytes = encodeSampleResponse({
      sequences: [{ tokens: [1, 2, 3], logprobs: [-0.5, -1, -2], stop_reason: 'length' }],
      prompt_logprobs: [null, -0.25],
      topk_prompt_logprobs: [
        null,
        [
          [4, -0.25],
          [7, -3],
        ],
      ],
      prompt_cache_hit_tokens: 0,
    });
    const decoded = decodeSampleResponse(bytes);
    expect(decoded.sequences).toEqual([{ tokens: [1, 2, 3], logprobs: [-0.5, -1, -2], stop_reason: 'length' }]);
    expect(decoded.prompt_logprobs).toEqual([null, -0.25]);
    expect(decoded.topk_prompt_logprobs).toEqual([
      null,
      [
        [4, -0.25],
        [7, -3],
      ],
    ]);
  });

  it('round-trips a forward_backward output through one batched ArrayRecord sliced by byte offsets', () => {
    const bytes = encodeForwardBackwardOutput({
      loss_fn_output_type: 'ArrayRecord',
      loss_fn_outputs: [
        { logprobs: { data: [-1, -2], dtype: 'float32', shape: [2] } },
        { logprobs: { data: [-0.5, -0.25, -4], dtype: 'float32', shape: [3] } },
      ],
      metrics: { 'loss:sum': 7.75 },
    });
    expect(decodeForwardBackwardOutput(bytes)).toEqual({
      loss_fn_output_type: 'ArrayRecord',
      loss_fn_outputs: [
        { logprobs: { data: [-1, -2], dtype: 'float32', shape: [2] } },
        { logprobs: { data: [-0.5, -0.25, -4], dtype: 'float32', shape: [3] } },
      ],
      metrics: { 'loss:sum': 7.75 },
    });
  });
});
