import { AglError, type AglErrorOptions } from './agl-error';

/** A server that could not be reached (refused, reset, timed out) after the client's retries. */
export class ConnectionError extends AglError {
  static override readonly errorName = 'AGL_ConnectionError';
  /** The URL that was called. */
  readonly url: string;

  constructor(url: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.url = url;
  }
}
