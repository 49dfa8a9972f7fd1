import { AglError, type AglErrorOptions } from '@agl/core/errors';

/**
 * The Tinker service answered a call with an error (an HTTP 4xx/5xx after the client's retries). Names the call, the
 * status and the service's own message (`detail`).
 */
export class TinkerApiError extends AglError {
  static override readonly errorName = 'AGL_TinkerApiError';
  /** The client call that failed (`forward_backward`, `create_model`, …). */
  readonly call: string;
  /** The HTTP status. */
  readonly status: number;
  /** The service's message (its `detail`, or the body's text). */
  readonly detail: string;

  constructor(call: string, status: number, detail: string, options?: AglErrorOptions & { hint?: string }) {
    super(`Tinker ${call} failed: HTTP ${status}: ${detail}${options?.hint ? ` (${options.hint})` : ''}`, options);
    this.call = call;
    this.status = status;
    this.detail = detail;
  }
}

/**
 * A request the service accepted failed while it ran: the future answered `{"error", "category"}` (SDK
 * `RequestFailedError`), or a Tinker-compatible server answered the future with HTTP 400.
 */
export class TinkerRequestFailedError extends AglError {
  static override readonly errorName = 'AGL_TinkerRequestFailedError';
  /** The client call whose request failed. */
  readonly call: string;
  /** The future's request id. */
  readonly requestId: string;
  /** `user` (the request was wrong), `server` or `unknown`. */
  readonly category: string;
  /** The service's message. */
  readonly detail: string;

  constructor(call: string, requestId: string, category: string, detail: string, options?: AglErrorOptions) {
    super(`Tinker ${call} failed (request ${requestId}, ${category} error): ${detail}`, options);
    this.call = call;
    this.requestId = requestId;
    this.category = category;
    this.detail = detail;
  }
}
