/**
 * The AGL schema: AGL 0.3's data model in camelCase, the MDP view (transitions, trajectories), the status-transition
 * table, and the wire codec. Imports nothing Node-only, so it runs in a browser.
 */
export {
  RolloutStatus,
  AttemptStatus,
  WorkerStatus,
  RolloutMode,
  StatusCode,
  QUEUING_STATUSES,
  RUNNING_STATUSES,
  TERMINAL_STATUSES,
  isTerminalStatus,
} from './enums';
export { JsonValue, JsonObject } from './json';
export {
  RolloutConfig,
  defaultRolloutConfig,
  Rollout,
  Attempt,
  AttemptedRollout,
  EnqueueRolloutRequest,
  isAttemptedRollout,
  type RolloutConfigInput,
} from './rollout';
export { Worker } from './worker';
export {
  LlmResource,
  ProxyLlmResource,
  PromptTemplateResource,
  Resource,
  NamedResources,
  ResourcesUpdate,
  proxyLlmBaseUrl,
  formatPromptTemplate,
  type NamedResourcesInput,
} from './resources';
export {
  AttributeValue,
  Attributes,
  TraceStatus,
  SpanContext,
  SpanEvent,
  SpanLink,
  OtelResource,
  Span,
  normalizeTimestamp,
  type SpanInput,
} from './span';
export { ChatMessage, TokenLogprob, Transition, Trajectory } from './transition';
export {
  ROLLOUT_TRANSITIONS,
  ATTEMPT_TRANSITIONS,
  canTransitionRollout,
  canTransitionAttempt,
  assertRolloutTransition,
  assertAttemptTransition,
  rolloutStatusFromAttempt,
} from './status-transitions';
export { newRolloutId, newAttemptId, newResourcesId, newTraceId, newSpanId } from './ids';
export { camelToSnake, snakeToCamel, toWire, fromWire, wirePath, WIRE_SHAPES, type WireShape } from './wire-codec';
export { toWireJson } from './to-wire-json';
export { parseApi, parseWire } from './parse';
export { SCHEMA_VERSION, StoredDocument, toStoredDocument, readStoredDocument } from './stored-document';
export { MAX_JSON_DEPTH, jsonDepth, jsonStructure, type JsonStructure } from '../internal/json-scan';
export { emptyRecord } from './empty-record';
export { fastParseSpan } from './fast-span';
export {
  MAX_REWARD_MAGNITUDE,
  rewardProblem,
  checkReward,
  MIN_TIME_SECONDS,
  MAX_TIME_SECONDS,
  timeProblem,
} from './value-bounds';
export {
  ReleaseState,
  ReleaseArm,
  ReleaseDecision,
  ReleaseArmFigures,
  Release,
  DEFAULT_RELEASE_SHARES,
  DEFAULT_RELEASE_GUARDS,
  DEFAULT_RELEASE_METRIC,
  DEFAULT_RELEASE_MIN_REQUESTS,
  DEFAULT_RELEASE_ALPHA,
  RELEASE_METADATA,
  releaseSettingProblem,
  parseReleaseGuard,
  releaseArmFor,
  releaseToWire,
  releaseFromWire,
  type ReleaseSnapshot,
  type ReleaseGuard,
} from './release';
