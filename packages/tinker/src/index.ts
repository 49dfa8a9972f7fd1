/**
 * `@agl/tinker`: a TypeScript client of the Tinker training and sampling API, and the chat templates and tokenizers
 * that turn an agent's messages into the exact token ids a model samples and trains on.
 */

// The Tinker client (ServiceClient → TrainingClient / SamplingClient), its types and wire codecs.
export * from './client/index';
export * from './types/tinker-types';
export {
  LOSS_INPUT_DTYPES,
  REQUIRED_LOSS_INPUTS,
  modelInputFromTokens,
  modelInputTokens,
  tensorData,
  tensorLength,
  denseValues,
  normalizeDatum,
  validateDatums,
} from './types/datum-builders';
export {
  encodeForwardBackwardRequest,
  decodeForwardBackwardRequest,
  type ForwardBackwardRequestFields,
} from './proto/forward-backward-request-codec';
export {
  encodeSampleResponse,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  decodeForwardBackwardOutput,
} from './proto/response-codec';
export { PROTOBUF_CONTENT_TYPE } from './proto/tinker-public-proto';

// Chat templates and tokenizers: messages → exact token ids, sampled ids → OpenAI messages.
export * from './chat/index';
