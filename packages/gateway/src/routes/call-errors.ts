import type { ServerResponse } from 'node:http';
import { AglError, NotFoundError, UpstreamError, UserError, ValidationError } from '@agl/core/errors';
import { type GatewayErrorBody, sendError } from './http-io';

/**
 * A request the gateway refuses with a given 4xx: a body over a limit (413), a backend endpoint that is not allowed
 * (403) or malformed (400), an odd rollout id (400).
 */
export class RequestRefusedError extends AglError {
  static override readonly errorName = 'AGL_RequestRefusedError';

  constructor(
    /** HTTP status of the answer. */
    readonly status: number,
    /** The answer's `error_type`. */
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** Maps an error thrown while handling a call to the HTTP answer (Contract 5: 4xx for caller mistakes). */
export function errorResponse(err: unknown): GatewayErrorBody {
  if (err instanceof RequestRefusedError) return { status: err.status, errorType: err.errorType, detail: err.message };
  if (ValidationError.isInstance(err)) return { status: 400, errorType: 'invalid_request', detail: err.message };
  if (NotFoundError.isInstance(err)) return { status: 404, errorType: 'not_found', detail: err.message };
  if (UpstreamError.isInstance(err)) {
    return {
      status: err.status,
      errorType: err.failure === 'timeout' ? 'upstream_timeout' : 'upstream_unreachable',
      detail: err.message,
    };
  }
  if (UserError.isInstance(err)) return { status: 503, errorType: 'backend_not_configured', detail: err.message };
  const message = err instanceof Error ? err.message : String(err);
  if (AglError.isInstance(err)) return { status: 500, errorType: 'internal_error', detail: `${err.name}: ${message}` };
  return { status: 500, errorType: 'internal_error', detail: `Unexpected gateway error: ${message}` };
}

/** Sends {@link errorResponse} of an error (or destroys a stream that already started). */
export function sendCallError(res: ServerResponse, err: unknown): GatewayErrorBody {
  const body = errorResponse(err);
  sendError(res, body);
  return body;
}

/** The answer when the call succeeded upstream but its span could not be stored. */
export function storeFailure(err: unknown): GatewayErrorBody {
  const message = err instanceof Error ? err.message : String(err);
  if (NotFoundError.isInstance(err) || ValidationError.isInstance(err)) {
    return {
      status: NotFoundError.isInstance(err) ? 404 : 400,
      errorType: 'span_rejected',
      detail: `The store refused the call's span: ${message}`,
    };
  }
  return {
    status: 503,
    errorType: 'store_unavailable',
    detail: `The backend answered, but the gateway could not record the call in the store (${message}). Nothing was stored; retry the call when the store is reachable.`,
  };
}
