/** `@agl/store/server`: the AGL store server (Agent Lightning 0.3 REST protocol, OTLP/HTTP traces, AGL 1.0 events). */
export {
  createStoreServer,
  DEFAULT_BODY_LIMIT,
  DEFAULT_MAX_WAIT_SECONDS,
  DEFAULT_STORE_PORT,
  type StoreServer,
  type StoreServerOptions,
} from './create-store-server';
export { toErrorReply, HTTP_ERROR_TYPES, type ErrorBody, type ErrorReply } from './http-errors';
export { API_PREFIX } from './route-context';
export { WAIT_PENDING_HEADER, WAIT_CLOSING_HEADER } from './routes/misc-routes';
export { ATTR_EVENT_TYPE, ATTR_EVENT_DATA } from './routes/event-routes';
export { SORT_FIELDS } from './request-schemas';
export { EXT_PREFIX, EXT_ROLLOUT_SORT_FIELDS } from './routes/ext-routes';
export { maskSecret, maskSecrets } from './routes/ext-mask-secrets';
export { isStaticAppRequest } from './routes/ext-static-routes';
export { StoreMetrics, registerMetricsRoute } from './metrics';
export { registerRequestLog, type RequestLogLine, type RequestLogOption } from './request-log';
