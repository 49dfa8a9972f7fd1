import type { FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { UserError } from '@agl/core/errors';
import { idProblem, MAX_ID_LENGTH } from '@agl/core/guards';
import { hostHeaderAllowed, hostRefusedDetail } from '@agl/core/net';
import { HTTP_ERROR_TYPES, fieldError } from './http-errors';
import { sendJson } from './route-context';

/**
 * DNS rebinding: a server bound to loopback answers only `Host` values naming loopback (or one of `allowedHosts`), so
 * a web page whose name was re-pointed at 127.0.0.1 cannot read or change the store. Runs before every other hook.
 */
export function registerHostCheck(app: FastifyInstance, bindHost: string, allowedHosts: readonly string[]): void {
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.host;
    if (hostHeaderAllowed(bindHost, header, allowedHosts)) return;
    return sendJson(reply, 403, { detail: hostRefusedDetail(header), error_type: HTTP_ERROR_TYPES.hostNotAllowed });
  });
}

/**
 * Ids in the URL path (`:rollout_id`, `:resources_id`, ...) are 1 to `MAX_ID_LENGTH` characters, not `.`
 * or `..`, without slashes, backslashes or control characters; anything else is a 400 naming the parameter, before the
 * body is read.
 */
export function registerPathIdCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (params === undefined || params === null) return;
    for (const [name, value] of Object.entries(params)) {
      if (!name.endsWith('_id') || typeof value !== 'string') continue;
      if (idProblem(value) !== null) {
        const shown = value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}...` : JSON.stringify(value);
        throw fieldError(
          name,
          `${shown} is not a valid id: ids are 1 to ${MAX_ID_LENGTH} characters, not "." or "..", without "/", "\\" or control characters`,
          400,
        );
      }
    }
  });
}

/** Request headers a cross-origin page may send: never `x-agl-reveal-secrets`, so browsers only ever see masked keys. */
const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'content-encoding'];

/**
 * The CORS settings for `--cors-origin`. `*` allows every origin except `null` and never sends
 * `Access-Control-Allow-Credentials`; a list of origins allows those, with credentials. `null` (sandboxed frames, `file:`
 * pages) is never an allowed origin.
 */
export function corsOptions(corsOrigin: string | readonly string[]): FastifyCorsOptions {
  const origins = typeof corsOrigin === 'string' ? [corsOrigin] : [...corsOrigin];
  if (origins.some((origin) => origin.trim().toLowerCase() === 'null')) {
    throw new UserError(
      "Invalid --cors-origin 'null': the null origin (sandboxed frames, file: pages) is never allowed. Name the page's real origin, e.g. http://localhost:5173.",
    );
  }
  const any = origins.includes('*');
  return {
    origin: any ? (origin, done) => done(null, origin !== undefined && origin !== 'null') : origins,
    credentials: !any,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: ['x-agl-wait-pending'],
  };
}
