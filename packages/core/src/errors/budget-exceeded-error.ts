import { AglError, type AglErrorOptions } from './agl-error';

/** A configured token or cost budget (e.g. of APO's LLM calls) ran out; the caller should stop and keep what it has. */
export class BudgetExceededError extends AglError {
  static override readonly errorName = 'AGL_BudgetExceededError';
  /** Which budget ran out: `tokens` or `cost`. */
  readonly budget: 'tokens' | 'cost';
  /** What was used when the call was refused. */
  readonly used: number;
  /** The configured limit. */
  readonly limit: number;

  constructor(budget: 'tokens' | 'cost', used: number, limit: number, message: string, options?: AglErrorOptions) {
    super(message, options);
    this.budget = budget;
    this.used = used;
    this.limit = limit;
  }
}
