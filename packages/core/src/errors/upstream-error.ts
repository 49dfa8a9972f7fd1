import { AglError, type AglErrorOptions } from './agl-error';

/** Why an upstream (model backend) call failed before a response arrived. */
export type UpstreamFailure = 'timeout' | 'connection';

/**
 * A model backend behind the AGL gateway could not be reached or did not answer in time. HTTP 504 for a timeout, 502
 * for a connection error. (An HTTP error *answer* from the backend is passed through, not wrapped in this error.)
 */
export class UpstreamError extends AglError {
  static override readonly errorName = 'AGL_UpstreamError';
  /** `timeout` or `connection`. */
  readonly failure: UpstreamFailure;
  /** The backend URL that failed (never includes credentials). */
  readonly url: string;
  /** Suggested HTTP status: 504 for a timeout, 502 for a connection error. */
  readonly status: 502 | 504;

  constructor(failure: UpstreamFailure, url: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.failure = failure;
    this.url = url;
    this.status = failure === 'timeout' ? 504 : 502;
  }
}
