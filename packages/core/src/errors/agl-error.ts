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
  /**
   * The stable name of this class's errors, which becomes each error's {@link AglError.name} and which
   * {@link AglError.isInstance} checks; every subclass sets its own (`AGL_NotFoundError`).
   */
  static readonly errorName: string = 'AGL_Error';
  /** A stable, machine-readable name such as `AGL_NotFoundError`. */
  override readonly name: string;

  constructor(message: string, options: AglErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = (new.target as typeof AglError).errorName;
  }

  /**
   * True when `error` is an error of this class, whichever copy of the package created it: on `AglError` itself any
   * AGL error, on a subclass one whose name is the subclass's {@link AglError.errorName}.
   */
  static isInstance<T extends AglError>(this: abstract new (...args: never[]) => T, error: unknown): error is T {
    const errorName = (this as unknown as typeof AglError).errorName;
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[MARKER] === true &&
      ((this as unknown) === AglError || (error as AglError).name === errorName)
    );
  }
}

/** Builds the `isInstance` check of a subclass from its stable name. */
export function hasErrorName<T extends AglError>(error: unknown, name: string): error is T {
  return AglError.isInstance(error) && error.name === name;
}
