import { AglError, type AglErrorOptions } from './agl-error';

/** A non-2xx answer from an AGL server, as seen by a client. Keeps the status and the server's `error_type`. */
export class HttpError extends AglError {
  static override readonly errorName = 'AGL_HttpError';
  /** HTTP status code. */
  readonly status: number;
  /** The server's `error_type`, when the body had one. */
  readonly errorType: string | undefined;
  /** The server's `detail`. */
  readonly detail: string;

  constructor(status: number, detail: string, errorType?: string, options?: AglErrorOptions) {
    super(`HTTP ${status}${errorType ? ` ${errorType}` : ''}: ${detail}`, options);
    this.status = status;
    this.detail = detail;
    this.errorType = errorType;
  }
}
