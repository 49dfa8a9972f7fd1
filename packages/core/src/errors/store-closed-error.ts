import { AglError, type AglErrorOptions } from './agl-error';

/** A call on a store after `close()`. */
export class StoreClosedError extends AglError {
  static override readonly errorName = 'AGL_StoreClosedError';

  constructor(store: string, options?: AglErrorOptions) {
    super(
      `${store} is closed. Create a new store instance (or reopen the database file) before calling it again.`,
      options,
    );
  }
}
