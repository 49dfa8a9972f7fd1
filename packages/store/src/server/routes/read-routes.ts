import type { FastifyInstance } from 'fastify';
import { toWire, type WireShape } from '@agl/core/schema';
import type { PaginatedResult } from '@agl/core/store';
import { bodyObject, normalizeQuery } from '../request-schemas';
import { sendJson } from '../route-context';

/** One kind of document read by {@link registerReadRoutes}. */
export interface ReadRoutes<T> {
  /** The collection's path (`/v1/agl/workers`). */
  path: string;
  /** The path parameter of one document (`worker_id`). */
  idParam: string;
  /** The wire shape its documents are answered in. */
  shape: WireShape;
  /** What a search body is, for its 422 (`worker query`). */
  what: string;
  /** Query string parameters that are lists (`status_in`). */
  listKeys: readonly string[];
  /** Runs a query given as a raw body object. */
  query: (raw: unknown) => Promise<PaginatedResult<T>>;
  /** One document by id, or null. */
  get: (id: string) => Promise<T | null>;
}

/**
 * The read routes of one kind of document: `GET {path}` (the query in the query string), `POST {path}/search` (in a
 * JSON body), both answering a page, and `GET {path}/:{idParam}` (the document or null).
 */
export function registerReadRoutes<T>(app: FastifyInstance, routes: ReadRoutes<T>): void {
  const { path, shape } = routes;
  const answerPage = async (raw: unknown) => {
    const page = await routes.query(raw);
    return { ...page, items: toWire(shape, page.items) };
  };
  app.get(path, async (request, reply) =>
    sendJson(reply, 200, await answerPage(normalizeQuery(request.query, routes.listKeys))),
  );
  app.post(`${path}/search`, async (request, reply) =>
    sendJson(reply, 200, await answerPage(bodyObject(request.body, routes.what))),
  );
  app.get<{ Params: Record<string, string> }>(`${path}/:${routes.idParam}`, async (request, reply) => {
    const item = await routes.get(request.params[routes.idParam]!);
    return sendJson(reply, 200, item === null ? null : toWire(shape, item));
  });
}
