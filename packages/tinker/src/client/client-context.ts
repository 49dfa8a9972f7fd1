import type { ClientConfigResponse } from '../types/tinker-types';
import { futureOf, retrieveFuture, type FutureResultKind, type TinkerRequestType } from './retrieve-future';
import type { TinkerHttp, TinkerRequestOptions } from './tinker-http';

/** How forward_backward bodies travel: protobuf as SDK 0.25 sends them, JSON, or protobuf with a JSON fallback. */
export type ForwardBackwardWire = 'auto' | 'protobuf' | 'json';

/** What the service client shares with the training and sampling clients it makes. */
export interface ClientContext {
  http: TinkerHttp;
  sessionId: string;
  clientConfig: ClientConfigResponse;
  /** The wire for forward_backward; `auto` turns into `json` once a server refuses protobuf. */
  wire: { forwardBackward: ForwardBackwardWire };
  onQueueState?: (state: string, reason: string | undefined) => void;
}

/**
 * Submits an async call (retried as the SDK retries submits) and waits for its future. A 410 from retrieve_future
 * re-submits the same body.
 */
export async function submitAndWait<T>(
  context: ClientContext,
  call: string,
  requestType: TinkerRequestType,
  path: string,
  request: TinkerRequestOptions,
  kind: FutureResultKind = 'json',
): Promise<T> {
  return (await submitOnly<T>(context, call, requestType, path, request, kind))();
}

/** Submits an async call and returns a function that waits for its result (so later submits need not wait). */
export async function submitOnly<T>(
  context: ClientContext,
  call: string,
  requestType: TinkerRequestType,
  path: string,
  request: TinkerRequestOptions,
  kind: FutureResultKind = 'json',
): Promise<() => Promise<T>> {
  const submit = async () => {
    const response = await context.http.requestOk(call, path, { method: 'POST', retry: true, ...request });
    return futureOf(call, JSON.parse(new TextDecoder().decode(response.bytes)));
  };
  const submittedAt = Date.now();
  const future = await submit();
  return () =>
    retrieveFuture<T>(context.http, call, requestType, future, kind, {
      resubmit: submit,
      submittedAt,
      ...(context.onQueueState ? { onQueueState: context.onQueueState } : {}),
    });
}
