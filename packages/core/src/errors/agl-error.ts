const MARKER = Symbol.for('agl.error');

/** Options shared by every AGL error. */
export interface AglErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The one base class of every error AGL throws. Checks use {@link AglError.isInstance}, which looks for a
 * `Symbol.for` marker instead of the prototype chain, so they work across duplicated installs.
 */
export class AglError extends Error {
  readonly [MARKER] = true;
  /** A stable, machine-readable name such as `AGL_NotFoundError`. */
  override readonly name: string = 'AGL_Error';

  constructor(message: string, options: AglErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }

  /** True when `error` is any AGL error, whichever copy of the package created it. */
  static isInstance(error: unknown): error is AglError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** Builds the `isInstance` check of a subclass from its stable name. */
export function hasErrorName<T extends AglError>(error: unknown, name: string): error is T {
  return AglError.isInstance(error) && error.name === name;
}
