import { AglError, type AglErrorOptions } from './agl-error';

/** A status change that the transition table does not allow, such as `succeeded → preparing`. HTTP 409. */
export class InvalidTransitionError extends AglError {
  static override readonly errorName = 'AGL_InvalidTransitionError';
  /** `rollout` or `attempt`. */
  readonly entity: 'rollout' | 'attempt';
  /** The status the entity has now. */
  readonly from: string;
  /** The status that was asked for. */
  readonly to: string;

  constructor(entity: 'rollout' | 'attempt', id: string, from: string, to: string, options?: AglErrorOptions) {
    super(
      `Illegal ${entity} status transition for ${id}: "${from}" → "${to}". ` +
        `A ${entity} in "${from}" cannot move to "${to}"; see ${entity === 'rollout' ? 'ROLLOUT' : 'ATTEMPT'}_TRANSITIONS in @agl/core/schema for the allowed moves.`,
      options,
    );
    this.entity = entity;
    this.from = from;
    this.to = to;
  }
}
