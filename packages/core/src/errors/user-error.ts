import { AglError, hasErrorName, type AglErrorOptions } from './agl-error';

/** Misconfiguration by the caller: a bad option, an emitter used outside a rollout, a missing file. */
export class UserError extends AglError {
  override readonly name = 'AGL_UserError';

  constructor(message: string, options?: AglErrorOptions) {
    super(message, options);
  }

  static override isInstance(error: unknown): error is UserError {
    return hasErrorName(error, 'AGL_UserError');
  }
}
