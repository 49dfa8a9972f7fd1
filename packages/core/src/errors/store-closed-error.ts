import { AglError, hasErrorName, type AglErrorOptions } from './agl-error';

/** A call on a store after `close()`. */
export class StoreClosedError extends AglError {
  override readonly name = 'AGL_StoreClosedError';

  constructor(store: string, options?: AglErrorOptions) {
    super(
      `${store} is closed. Create a new store instance (or reopen the database file) before calling it again.`,
      options,
    );
  }

  static override isInstance(error: unknown): error is StoreClosedError {
    return hasErrorName(error, 'AGL_StoreClosedError');
  }
}
