import { AglError, type AglErrorOptions } from './agl-error';

/** A rollout, attempt, resources or worker id that the store does not know. HTTP 404. */
export class NotFoundError extends AglError {
  static override readonly errorName = 'AGL_NotFoundError';
  /** What kind of thing was looked up: `rollout`, `attempt`, `resources`, `worker`. */
  readonly entity: string;
  /** The id that was not found. */
  readonly id: string;

  constructor(entity: string, id: string, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.entity = entity;
    this.id = id;
  }
}
