import { describe, expect, it } from 'vitest';
import { AglError } from './agl-error';
import { ConflictError } from './conflict-error';
import { ProcessAgentError } from './process-agent-error';
import { UserError } from './user-error';
import { InvalidTransitionError } from './invalid-transition-error';
import { NotFoundError } from './not-found-error';
import { ValidationError } from './validation-error';

describe('AglError', () => {
  it('recognises errors by marker, also from another copy of the package', () => {
    // An error object built by a different copy of @agl/core carries the same Symbol.for marker and name.
    const foreign = Object.assign(new Error('x'), { [Symbol.for('agl.error')]: true, name: 'AGL_NotFoundError' });
    expect(AglError.isInstance(foreign)).toBe(true);
    expect(NotFoundError.isInstance(foreign)).toBe(true);
    expect(ValidationError.isInstance(foreign)).toBe(false);
    expect(AglError.isInstance(new Error('plain'))).toBe(false);
  });

  it('keeps typed context and the cause', () => {
    const cause = new Error('root');
    const error = new NotFoundError('rollout', 'ro-x', 'Rollout ro-x not found.', { cause });
    expect(error.entity).toBe('rollout');
    expect(error.id).toBe('ro-x');
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('AGL_NotFoundError');
    const transition = new InvalidTransitionError('rollout', 'ro-x', 'succeeded', 'preparing');
    expect(transition).toMatchObject({ from: 'succeeded', to: 'preparing', entity: 'rollout' });
    expect(AglError.isInstance(transition)).toBe(true);
  });

  it.each([
    ['AGL_UserError', () => new UserError('bad option'), UserError],
    ['AGL_ProcessAgentError', () => new ProcessAgentError('exited 1'), ProcessAgentError],
    ['AGL_ConflictError', () => new ConflictError('rolloutId', 'in use'), ConflictError],
  ] as const)('names a %s after its class and tells it from the other classes', (name, make, own) => {
    const error = make();
    expect(error.name).toBe(name);
    expect(error).toBeInstanceOf(own);
    expect(own.isInstance(error)).toBe(true);
    expect(AglError.isInstance(error)).toBe(true);
    for (const other of [UserError, ProcessAgentError, ConflictError].filter((c) => c !== own))
      expect(other.isInstance(error)).toBe(false);
  });
});
