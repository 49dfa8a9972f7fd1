/**
 * `@agl/core/transitions`: spans → MDP transitions (Contract 3) and fine-tuning messages. Pure functions of span lists;
 * runs in Node and in a browser.
 */
export {
  TraceToTransitions,
  isGatewaySpan,
  sortSpans,
  type TraceToTransitionsOptions,
  type RolloutInfo,
} from './trace-to-transitions';
export { GatewayTraceToTransitions, type GatewayTraceToTransitionsOptions } from './gateway-trace-to-transitions';
export { TraceToMessages, type FineTuningRow, type OpenAiChatMessage } from './trace-to-messages';
export { buildTraceTree, repairHierarchy, walkTree, type TraceNode } from './trace-tree';
export { agentNameOf } from './agent-name';
export {
  genAiSpanMapper,
  liftGenAiContentEvents,
  nameGenAiAgentSpans,
  composeSpanMappers,
  type SpanMapper,
} from './genai-span-mapper';
export {
  findLlmCalls,
  isDefaultLlmCall,
  llmCallMatcher,
  agentMatcher,
  responseIdOf,
  type LlmCallMatch,
  type AgentMatch,
  type FoundLlmCall,
  type FindLlmCallsOptions,
} from './llm-calls';
export { matchRewards, type RewardMatchPolicy } from './reward-matching';
export {
  normalizeLlmCall,
  detectLlmCallFormat,
  chatMessageFromOpenAi,
  asMessageList,
  asTokenIds,
  imageUrlsOf,
  type NormalizedLlmCall,
  type LlmCallFormat,
  type ToolDefinition,
} from './llm-call-normalizer';
export {
  getRewardValue,
  getRewardsFromSpan,
  isRewardSpan,
  isRewardScope,
  findRewardSpans,
  findFinalReward,
  findFinalRewardSpan,
  getRewardSource,
  listFeedback,
  getMessageValue,
  getObjectValue,
  type RewardDimension,
  type RewardSource,
  type FeedbackEntry,
  type SpanLike,
} from './reward-readers';
export {
  flattenAttributes,
  unflattenAttributes,
  filterAndUnflatten,
  sanitizeAttributeValue,
  toSpanAttributes,
  hasPrefix,
  cleanAttributes,
} from './otel-attributes';
export { taskIdOf, stableTaskHash, canonicalJson, sha256Hex } from './task-id';
