import { AglError, hasErrorName, type AglErrorOptions } from './agl-error';

/** A rollout, attempt, resources or worker id that the store does not know. HTTP 404. */
export class NotFoundError extends AglError {
  override readonly name = 'AGL_NotFoundError';
  /** What kind of thing was looked up: `rollout`, `attempt`, `resources`, `worker`. */
  readonly entity: string;
  /** The id that was not found. */
  readonly id: string;

  constructor(entity: string, id: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.entity = entity;
    this.id = id;
  }

  static override isInstance(error: unknown): error is NotFoundError {
    return hasErrorName(error, 'AGL_NotFoundError');
  }
}
