import { AglError } from './agl-error';

/** Misconfiguration by the caller: a bad option, an emitter used outside a rollout, a missing file. */
export class UserError extends AglError {
  static override readonly errorName = 'AGL_UserError';
}
