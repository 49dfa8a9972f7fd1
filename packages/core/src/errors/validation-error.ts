import { AglError, type AglErrorOptions } from './agl-error';

/** One problem found while validating input. */
export interface ValidationIssue {
  /** Dotted path of the offending field, in the wire (snake_case) spelling when the input came over HTTP. */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** Input that does not match the schema (wrong type, unknown enum value, missing field). HTTP 400/422. */
export class ValidationError extends AglError {
  static override readonly errorName = 'AGL_ValidationError';
  /** Every problem found, first one first. */
  readonly issues: ValidationIssue[];
  /** Suggested HTTP status: 400 for a bad value, 422 for a schema violation. */
  readonly status: 400 | 422;

  constructor(message: string, issues: ValidationIssue[] = [], options: AglErrorOptions & { status?: 400 | 422 } = {}) {
    super(message, options);
    this.issues = issues;
    this.status = options.status ?? 422;
  }
}
