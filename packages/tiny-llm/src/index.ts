export {
  TinyTokenizer,
  trainBpe,
  SPECIAL_TOKENS,
  type SpecialToken,
  type TokenizerSpec,
  type TextSegment,
} from './tokenizer/tiny-tokenizer';
export {
  renderChat,
  renderToolList,
  messageText,
  type RenderChatOptions,
  type RenderedChat,
} from './chat/chat-template';
export { TINY_CHAT_TEMPLATE } from './chat/jinja-chat-template';
export { tinyTokenizerFiles, tinyTokenizerId, type TinyTokenizerFiles } from './tokenizer/tokenizer-files';
export {
  parseToolCalls,
  formatToolCall,
  type ParsedToolCall,
  type ParsedAssistantOutput,
} from './chat/tool-call-parser';
export type { WireChatMessage, WireTool, WireToolCall } from './chat/chat-types';
export {
  DEFAULT_TINY_CONFIG,
  countParams,
  paramShapes,
  validateConfig,
  type TinyConfig,
  type ParamShape,
} from './model/tiny-config';
export { initWeights, cloneWeights, type TinyWeights } from './model/tiny-weights';
export { WeightStore, encodeWeights, decodeWeights, checkVersion } from './model/weight-store';
export { InferenceModel, type ForwardRow } from './model/inference-model';
export {
  generateSync,
  Sequence,
  type GenerationParams,
  type GeneratedToken,
  type FinishReason,
} from './model/sequence';
export { logSoftmax, sampleToken, topK, type SamplingOptions } from './model/sampler';
export { SeededRng } from './model/rng';
export { TrainerCore, policyRow } from './train/trainer-core';
export { saveCheckpoint, loadCheckpoint, type TrainerState, type OptimizerTensor } from './train/checkpoint';
export type { TrainRow, PackedBatch } from './train/batch';
export type {
  SftExample,
  PolicySample,
  OptimizerOptions,
  PolicyStepOptions,
  PolicyStepResult,
  SftStepResult,
  SftAccuracy,
} from './train/train-types';
export { TinyTrainer, type TinyTrainerOptions } from './worker/tiny-trainer';
export { InferenceEngine, type EngineChoice, type EngineGeneration } from './worker/inference-engine';
export { startTinyServer, type TinyServer, type TinyServerOptions } from './server/tiny-server';
export { TinyModelHost, type ServedModel, type TinyModelHostOptions } from './server/tiny-model-host';
export { GRPO, type GrpoOptions, type GrpoRunOptions, type GrpoRoundRecord, type GrpoBackend } from './grpo/index';
