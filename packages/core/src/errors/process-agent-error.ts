import { AglError } from './agl-error';

/** A process agent (DESIGN.md Contract 2b) could not start, exited non-zero, was killed, or timed out. */
export class ProcessAgentError extends AglError {
  static override readonly errorName = 'AGL_ProcessAgentError';
}
