/**
 * `@agl/core/tracer`: the rollout context, the OpenTelemetry span processor that writes spans to a LightningStore,
 * and the emitters. Node-only (AsyncLocalStorage, process hooks).
 */
export {
  withRolloutContext,
  withoutRecording,
  isRecordingOff,
  getRolloutContext,
  requireRolloutContext,
  setProcessRolloutContext,
  type RolloutContext,
  type RolloutTracer,
} from './rollout-context';
export {
  LightningSpanProcessor,
  setUnownedSpanHandler,
  type UnownedSpanHandler,
  type LightningSpanProcessorOptions,
  type SpanProcessorStats,
  type TracerLogger,
} from './lightning-span-processor';
export { AglTracer, getAglTracer, setAglTracer, ensureContextManager, type AglTracerOptions } from './agl-tracer';
export { installExitFlush, onProcessEnd, type ExitFlushHooks } from './exit-flush';
export { deferSpanWork, runDeferredSpanWork } from './deferred-span-work';
export {
  exportRecordsSync,
  storeReopenSpec,
  STORE_REOPEN,
  warmExitExporter,
  type ExitRecordsGroup,
  type StoreReopenSpec,
} from './exit-export';
export {
  spanFromOpenTelemetry,
  wireSpanFromOpenTelemetry,
  hrTimeToSeconds,
  preciseNowMs,
  type WireSpan,
} from './span-conversion';
export {
  emitReward,
  emitAnnotation,
  emitMessage,
  emitObject,
  emitException,
  type EmitOptions,
  type EmittedSpan,
  type EmittedAttributeValue,
} from './emitters';
export { operation, type OperationOptions, type OperationHandle } from './operation';
export * from './adapter-helpers';
export { traceOpenAiChat, type TraceOpenAiChatOptions } from './trace-openai-chat';
