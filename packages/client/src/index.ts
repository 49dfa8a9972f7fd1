/**
 * `@agl/client`: AGL for services. Record a live agent's requests as rollouts (`observe`, `observeHandler`,
 * `observeFetch`), send late user feedback (`feedback`), and talk to an AGL store server (`StoreClient`), with no
 * native module, server framework or database driver.
 */
export { StoreClient, type StoreClientOptions, type RolloutSpansOptions } from './store-client';
export {
  HttpTransport,
  errorFromResponse,
  type TransportOptions,
  type TransportRequest,
  type TransportResponse,
} from './http-transport';
export { REVEAL_SECRETS_HEADER } from './reveal-secrets-header';
export { observe, feedback, type ObserveOptions, type ObservedRollout, type FeedbackOptions } from './observe/observe';
export {
  observeHandler,
  observeFetch,
  observedRollout,
  ROLLOUT_ID_HEADER,
  type ObserveRequestOptions,
} from './observe/observe-handler';
export {
  configureObserve,
  observeStats,
  flushObserve,
  shutdownObserve,
  initObserveFromEnv,
  type ConfigureObserveOptions,
} from './observe/observe-config';
export type { ObserveStats, ObserveLogger } from './observe/recorder';
export { redactSecrets, redactText, type RedactFn, type RedactOptions, type SpanAttributes } from './observe/redact';
export { servedResources, unitPosition, type ServedResources } from './observe/release-assignment';
