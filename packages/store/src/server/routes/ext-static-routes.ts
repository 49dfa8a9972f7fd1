import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { HTTP_ERROR_TYPES } from '../http-errors';
import { sendJson } from '../route-context';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Paths that always belong to the API, never to the static app. */
const API_PATHS = /^\/(v1|api)(\/|$)/;

/** True when a request is for the public static app (GET/HEAD outside `/v1` and `/api`): no token needed. */
export function isStaticAppRequest(method: string, url: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return !API_PATHS.test(url.split('?')[0] ?? '');
}

function notFound(reply: FastifyReply, path: string): FastifyReply {
  return sendJson(reply, 404, {
    detail: `Not Found: ${path} is neither a route of the AGL store server nor a file of the dashboard.`,
    error_type: HTTP_ERROR_TYPES.routeNotFound,
  });
}

async function fileAt(root: string, relative: string): Promise<string | null> {
  const full = resolve(root, `.${relative}`);
  if (full !== root && !full.startsWith(root + sep)) return null;
  try {
    return (await stat(full)).isFile() ? full : null;
  } catch {
    return null;
  }
}

/**
 * Serves a built single-page app from `staticDir` at `/` (public): files by path, `index.html` for any other path
 * without a file extension (client-side routes). Refuses path traversal; `/v1/*` and `/api/*` stay API 404s.
 * Hashed files under `/assets/` are cached for a year; `index.html` is always revalidated.
 */
export function registerStaticRoutes(app: FastifyInstance, staticDir: string): void {
  const root = resolve(staticDir);
  app.route({
    method: 'GET',
    url: '/*',
    handler: async (request, reply) => {
      const rawPath = request.url.split('?')[0] ?? '/';
      if (API_PATHS.test(rawPath)) return notFound(reply, rawPath);
      let path: string;
      try {
        path = decodeURIComponent(rawPath);
      } catch {
        return notFound(reply, rawPath);
      }
      if (path.includes('\0') || path.split(/[\\/]/).includes('..')) return notFound(reply, rawPath);
      // An API path in disguise (`/%2Fv1/...`, `//v1/...`) is never the app.
      if (API_PATHS.test(path.replace(/[\\/]+/g, '/'))) return notFound(reply, rawPath);
      let file = path.endsWith('/') ? await fileAt(root, `${path}index.html`) : await fileAt(root, path);
      if (file === null && extname(path) === '') file = await fileAt(root, '/index.html');
      if (file === null) return notFound(reply, rawPath);
      const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
      const info = await stat(file);
      reply
        .code(200)
        .type(type)
        .header('content-length', info.size)
        .header('x-content-type-options', 'nosniff')
        .header(
          'cache-control',
          file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      if (request.method === 'HEAD') return reply.send();
      return reply.send(createReadStream(file));
    },
  });
}
