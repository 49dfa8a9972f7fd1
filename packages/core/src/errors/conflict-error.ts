import { AglError, type AglErrorOptions } from './agl-error';

/** A write that contradicts what the store already holds (a client-chosen id in use with other values). HTTP 409. */
export class ConflictError extends AglError {
  static override readonly errorName = 'AGL_ConflictError';
  /** The field whose value conflicts, in camelCase (`rolloutId`). */
  readonly field: string;

  constructor(field: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.field = field;
  }
}
