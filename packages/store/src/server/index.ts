/** `@agl/store/server`: the AGL store server (Agent Lightning 0.3 REST protocol, OTLP/HTTP traces, AGL 1.0 events). */
export {
  createStoreServer,
  DEFAULT_MAX_WAIT_SECONDS,
  DEFAULT_STORE_PORT,
  type StoreServer,
  type StoreServerOptions,
} from './create-store-server';
export {
  DEFAULT_BODY_LIMIT,
  DEFAULT_CONTROL_BODY_LIMIT,
  DEFAULT_MAX_ATTRIBUTES_PER_SPAN,
  DEFAULT_MAX_JSON_VALUES,
  DEFAULT_MAX_SPANS_PER_REQUEST,
} from './request-limits';
export { toErrorReply, HTTP_ERROR_TYPES, type ErrorBody, type ErrorReply } from './http-errors';
export { API_PREFIX } from './route-context';
export { WAIT_PENDING_HEADER, WAIT_CLOSING_HEADER } from './routes/misc-routes';
export { ATTR_EVENT_TYPE, ATTR_EVENT_DATA } from './routes/event-routes';
export { SORT_FIELDS } from './request-schemas';
export { EXT_PREFIX, EXT_ROLLOUT_SORT_FIELDS } from './routes/ext-routes';
export { REVEAL_SECRETS_HEADER, maskSecret, maskSecrets } from './resource-secrets';
export { isStaticAppRequest } from './routes/ext-static-routes';
export { StoreMetrics, registerMetricsRoute } from './metrics';
export { registerRequestLog, type RequestLogLine, type RequestLogOption } from './request-log';
export { parseNamedResourcesBody } from './named-resources-body';
