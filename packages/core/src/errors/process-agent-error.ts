import { AglError, hasErrorName, type AglErrorOptions } from './agl-error';

/** A process agent (DESIGN.md Contract 2b) could not start, exited non-zero, was killed, or timed out. */
export class ProcessAgentError extends AglError {
  override readonly name = 'AGL_ProcessAgentError';

  constructor(message: string, options?: AglErrorOptions) {
    super(message, options);
  }

  static override isInstance(error: unknown): error is ProcessAgentError {
    return hasErrorName(error, 'AGL_ProcessAgentError');
  }
}
