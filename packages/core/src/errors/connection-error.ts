import { AglError, hasErrorName, type AglErrorOptions } from './agl-error';

/** A server that could not be reached (refused, reset, timed out) after the client's retries. */
export class ConnectionError extends AglError {
  override readonly name = 'AGL_ConnectionError';
  /** The URL that was called. */
  readonly url: string;

  constructor(url: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.url = url;
  }

  static override isInstance(error: unknown): error is ConnectionError {
    return hasErrorName(error, 'AGL_ConnectionError');
  }
}
