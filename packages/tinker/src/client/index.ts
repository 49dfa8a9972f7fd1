export {
  ServiceClient,
  type ServiceClientOptions,
  type LoraTrainingOptions,
  type SamplingTarget,
} from './service-client';
export {
  TrainingClient,
  adamParams,
  combineForwardBackwardOutputs,
  type AdamOptions,
  type ForwardBackwardOptions,
  type SaveOptions,
} from './training-client';
export { SamplingClient, samplingParams, type SampleOptions } from './sampling-client';
export { TinkerApiError, TinkerRequestFailedError } from './tinker-errors';
export {
  TinkerHttp,
  DEFAULT_TINKER_BASE_URL,
  TINKER_SDK_WIRE_VERSION,
  isRetryableStatus,
  type TinkerConnectionOptions,
} from './tinker-http';
export { retrieveFuture, type UntypedFuture, type TinkerRequestType, type FutureResultKind } from './retrieve-future';
export type { ForwardBackwardWire } from './client-context';
