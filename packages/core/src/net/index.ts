/**
 * `@agl/core/net`: what "bound to loopback" means for AGL's servers (store, gateway), and the HTTP body decoding the
 * store server and its client share. Node-only.
 * @packageDocumentation
 */
export { isLoopbackHost, hostHeaderName, hostHeaderAllowed, hostRefusedDetail } from './loopback-host';
export { utf8Text } from './utf8-text';
export { urlForLog, SECRET_QUERY_PARAMETERS } from './url-for-log';
