import { ConnectionError } from '@agl/core/errors';
import { decodeForwardBackwardOutput, decodeSampleResponse } from '../proto/response-codec';
import { PROTOBUF_CONTENT_TYPE } from '../proto/tinker-public-proto';
import { TinkerApiError, TinkerRequestFailedError } from './tinker-errors';
import { errorDetail, jsonBody, type TinkerHttp } from './tinker-http';

/** What an accepted async call answers: the future's id (`future_id` on SkyRL's server). */
export interface UntypedFuture {
  request_id: string;
  model_id?: string;
}

/** How a future's result is decoded: JSON, or (for these two) protobuf when the server sends it. */
export type FutureResultKind = 'json' | 'sample' | 'forward_backward';

/** The SDK's `X-Tinker-Request-Type` values. */
export type TinkerRequestType =
  | 'CreateModel'
  | 'ForwardBackward'
  | 'Forward'
  | 'OptimStep'
  | 'SaveWeights'
  | 'SaveWeightsForSampler'
  | 'LoadWeights'
  | 'Sample'
  | 'UnloadModel';

/** Options of one wait. */
export interface RetrieveFutureOptions {
  /** Submits the request again when the server says the future is gone (HTTP 410). */
  resubmit?: () => Promise<UntypedFuture>;
  /** Told each time the server says the request waits in a queue (`queue_state`). */
  onQueueState?: (state: string, reason: string | undefined) => void;
  /** When the request was submitted (ms since epoch), for `X-Tinker-Create-Promise-Roundtrip-Time`. */
  submittedAt?: number;
}

const MAX_BAD_REQUEST_RETRIES = 3;
const MAX_CONSECUTIVE_SERVER_ERRORS = 30;

/** The future id of a submit's answer (`request_id`, or SkyRL's `future_id`). */
export function futureOf(call: string, answer: unknown): UntypedFuture {
  const body = (answer ?? {}) as { request_id?: unknown; future_id?: unknown; model_id?: unknown };
  const id = body.request_id ?? body.future_id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new TinkerApiError(call, 200, `the answer has no request_id: ${JSON.stringify(answer).slice(0, 200)}`);
  }
  return { request_id: String(id), ...(typeof body.model_id === 'string' ? { model_id: body.model_id } : {}) };
}

/**
 * Waits for a future as SDK 0.25's `_APIFuture` does: polls `POST /api/v1/retrieve_future` with
 * `allow_metadata_only: true` first; `try_again` answers, HTTP 408 and 5xx poll again at once; 429 and connection
 * errors back off (1, 2, 4 … 30 s); a 400 is retried three times; 410 re-submits; `{"error","category"}` throws
 * {@link TinkerRequestFailedError}. Sample and forward_backward results are asked for as protobuf
 * (`Accept: application/x-protobuf`) and read as JSON when a server only speaks JSON.
 */
export async function retrieveFuture<T>(
  http: TinkerHttp,
  call: string,
  requestType: TinkerRequestType,
  initial: UntypedFuture,
  kind: FutureResultKind,
  options: RetrieveFutureOptions = {},
): Promise<T> {
  let future = initial;
  let allowMetadataOnly = true;
  let backoffExponent = 0;
  let badRequests = 0;
  let serverErrors = 0;
  const roundtrip = options.submittedAt === undefined ? 0 : (Date.now() - options.submittedAt) / 1000;
  for (let iteration = 0; ; iteration++) {
    const headers: Record<string, string> = {
      'X-Tinker-Request-Iteration': String(iteration),
      'X-Tinker-Request-Type': requestType,
    };
    if (kind !== 'json') headers.Accept = PROTOBUF_CONTENT_TYPE;
    if (iteration === 0) headers['X-Tinker-Create-Promise-Roundtrip-Time'] = String(roundtrip);
    let response;
    try {
      response = await http.request(call, '/api/v1/retrieve_future', {
        body: { request_id: future.request_id, allow_metadata_only: allowMetadataOnly },
        headers,
        retry: false,
        timeoutMs: 45_000,
      });
    } catch (error) {
      if (!ConnectionError.isInstance(error) || backoffExponent >= 10) throw error;
      await http.sleep(Math.min(2 ** backoffExponent, 30) * 1000);
      backoffExponent++;
      continue;
    }
    const status = response.status;
    if (status >= 400) {
      if (status === 408) {
        backoffExponent = 0;
        badRequests = 0;
        reportQueueState(options, response.bytes);
        continue;
      }
      if (status >= 500) {
        if (++serverErrors > MAX_CONSECUTIVE_SERVER_ERRORS) throw http.apiError(`${call} (retrieve_future)`, response);
        continue;
      }
      if (status === 429) {
        await http.sleep(Math.min(2 ** backoffExponent, 30) * 1000);
        backoffExponent++;
        continue;
      }
      backoffExponent = 0;
      if (status === 410 && options.resubmit) {
        future = await options.resubmit();
        allowMetadataOnly = true;
        continue;
      }
      if (status === 400) {
        if (badRequests < MAX_BAD_REQUEST_RETRIES) {
          badRequests++;
          continue;
        }
        throw new TinkerRequestFailedError(call, future.request_id, 'user', errorDetail(response.bytes));
      }
      throw http.apiError(`${call} (retrieve_future)`, response);
    }
    serverErrors = 0;
    backoffExponent = 0;
    if (response.contentType.includes(PROTOBUF_CONTENT_TYPE)) {
      try {
        if (kind === 'sample') return decodeSampleResponse(response.bytes) as T;
        if (kind === 'forward_backward') return decodeForwardBackwardOutput(response.bytes) as T;
      } catch (error) {
        throw new TinkerApiError(
          call,
          status,
          `the protobuf result could not be decoded: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      throw new TinkerApiError(call, status, `the server sent a protobuf result for a ${requestType} request`);
    }
    const body = jsonBody<Record<string, unknown>>(call, response);
    if (body.type === 'try_again') {
      if (typeof body.queue_state === 'string') {
        options.onQueueState?.(body.queue_state, body.queue_state_reason as string | undefined);
      }
      continue;
    }
    if (body.status === 'complete_metadata') {
      allowMetadataOnly = false;
      continue;
    }
    if ('error' in body) {
      const category = typeof body.category === 'string' ? body.category.toLowerCase() : 'unknown';
      throw new TinkerRequestFailedError(call, future.request_id, category, String(body.error));
    }
    return body as T;
  }
}

function reportQueueState(options: RetrieveFutureOptions, bytes: Uint8Array): void {
  if (!options.onQueueState) return;
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes)) as { queue_state?: string; queue_state_reason?: string };
    if (body.queue_state) options.onQueueState(body.queue_state, body.queue_state_reason);
  } catch {
    // a 408 without a JSON body
  }
}
