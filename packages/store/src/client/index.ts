/** `@agl/store/client`: `StoreClient`, a LightningStore over HTTP (AGL 0.3 REST protocol). It lives in `@agl/client`. */
export {
  StoreClient,
  type StoreClientOptions,
  type RolloutSpansOptions,
  HttpTransport,
  errorFromResponse,
  type TransportOptions,
  type TransportRequest,
  type TransportResponse,
} from '@agl/client';
