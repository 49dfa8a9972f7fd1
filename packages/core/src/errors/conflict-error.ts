import { AglError, hasErrorName, type AglErrorOptions } from './agl-error';

/** A write that contradicts what the store already holds (a client-chosen id in use with other values). HTTP 409. */
export class ConflictError extends AglError {
  override readonly name = 'AGL_ConflictError';
  /** The field whose value conflicts, in camelCase (`rolloutId`). */
  readonly field: string;

  constructor(field: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.field = field;
  }

  static override isInstance(error: unknown): error is ConflictError {
    return hasErrorName(error, 'AGL_ConflictError');
  }
}
