import { UserError } from '@agl/core/errors';

/**
 * The browser build's stand-in for `node:crypto` (aliased in vite.config.ts). `@agl/core/transitions` hashes task inputs
 * with Node's SHA-256 in `taskIdOf`; the dashboard reads task ids from rollout metadata and never calls it.
 */
export function createHash(): never {
  throw new UserError('node:crypto is not available in the dashboard: read task ids from rollout.metadata.task_id.');
}
