/** `@agl/store/client`: `StoreClient`, a LightningStore over HTTP (AGL 0.3 REST protocol). */
export { StoreClient, type StoreClientOptions } from './store-client';
export {
  HttpTransport,
  errorFromResponse,
  type TransportOptions,
  type TransportRequest,
  type TransportResponse,
} from './http-transport';
