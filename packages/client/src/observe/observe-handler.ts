import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonValue } from '@agl/core/schema';
import { observe, type ObservedRollout, type ObserveOptions } from './observe';
import { getObserver, warnOnce } from './observe-config';

/** The response header that carries the request's rollout id (for `feedback` later). */
export const ROLLOUT_ID_HEADER = 'x-agl-rollout-id';

/** Largest request body (characters of JSON) stored as the default input; a longer one is cut and marked. */
const MAX_INPUT_BODY = 16 * 1024;

/** Options of {@link observeHandler} and {@link observeFetch}. */
export interface ObserveRequestOptions<Req> extends Omit<ObserveOptions, 'input'> {
  /** Chooses the stored task input. Default `{ method, path, body }` with a size-capped JSON body. */
  input?: (request: Req) => JsonValue | Promise<JsonValue>;
}

function cappedBody(body: unknown): JsonValue | undefined {
  if (body === undefined || body === null) return undefined;
  let text: string | undefined;
  try {
    text = typeof body === 'string' ? body : JSON.stringify(body);
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  if (text.length > MAX_INPUT_BODY) return { truncated: true, text: text.slice(0, MAX_INPUT_BODY) };
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as JsonValue;
    } catch {
      return body;
    }
  }
  return JSON.parse(text) as JsonValue;
}

function defaultInput(method: string | undefined, url: string | undefined, body: unknown): JsonValue {
  const path = (url ?? '/').split('?')[0] ?? '/';
  const input: { [key: string]: JsonValue } = { method: method ?? 'GET', path };
  const capped = cappedBody(body);
  if (capped !== undefined) input.body = capped;
  return input;
}

/** `options.input(request)`, or the default input when there is none or it throws (AGL never fails a request). */
async function chosenInput<Req>(
  options: ObserveRequestOptions<Req>,
  request: Req,
  fallback: () => JsonValue | Promise<JsonValue>,
): Promise<JsonValue> {
  if (options.input) {
    try {
      return await options.input(request);
    } catch (error) {
      warnOnce(
        getObserver().logger,
        'input',
        `[agl observe] options.input threw (${String(error)}); the default input is stored instead (warned once).`,
      );
    }
  }
  return fallback();
}

/** Why a request's rollout failed although its handler did not throw (a 5xx, an aborted response). */
class ResponseFailure extends Error {
  override name = 'ResponseFailure';
}

const requestRollouts = new WeakMap<object, ObservedRollout>();

/**
 * The rollout `observeHandler` made for this request (its id, and `resources`: the latest published prompt and model),
 * or `undefined` outside an observed handler. Read it in the handler to serve the request with the published resources.
 */
export function observedRollout(req: object): ObservedRollout | undefined {
  return requestRollouts.get(req);
}

/**
 * Wraps a `(req, res)` handler (node:http, Express, Connect): each request becomes a rollout (see `observe`) that ends
 * when the response finishes: `failed` on a 5xx status, a thrown error or a response closed before it finished. The
 * response carries `x-agl-rollout-id`. The default input never reads the request stream: its body is `req.body` when
 * a body parser already set it (Express `express.json()`), else left out. The handler's own errors are rethrown.
 */
export function observeHandler<Req extends IncomingMessage, Res extends ServerResponse, Rest extends unknown[]>(
  handler: (req: Req, res: Res, ...rest: Rest) => unknown,
  options: ObserveRequestOptions<Req> = {},
): (req: Req, res: Res, ...rest: Rest) => Promise<void> {
  return async (req, res, ...rest) => {
    const input = await chosenInput(options, req, () =>
      defaultInput(req.method, req.url, (req as { body?: unknown }).body),
    );
    const { input: _ignored, ...base } = options;
    void _ignored;
    await observe({ ...base, input }, async (rollout: ObservedRollout) => {
      if (!res.headersSent) res.setHeader(ROLLOUT_ID_HEADER, rollout.rolloutId);
      requestRollouts.set(req, rollout);
      const done = new Promise<void>((resolve, reject) => {
        const settle = (): void => {
          res.off('finish', settle);
          res.off('close', settle);
          if (!res.writableFinished)
            reject(new ResponseFailure('the response was closed before it finished (client aborted)'));
          else if (res.statusCode >= 500) reject(new ResponseFailure(`the response status was ${res.statusCode}`));
          else resolve();
        };
        if (res.writableFinished) queueMicrotask(settle);
        else {
          res.on('finish', settle);
          res.on('close', settle);
        }
      });
      let thrown: { error: unknown } | null = null;
      try {
        await handler(req, res, ...rest);
      } catch (error) {
        thrown = { error };
      }
      if (thrown) {
        done.catch(() => undefined);
        throw thrown.error;
      }
      await done;
    }).catch((error: unknown) => {
      // A failed response is the app's business: only a thrown handler error goes back to the caller.
      if (!(error instanceof ResponseFailure)) throw error;
    });
  };
}

/**
 * Wraps a Fetch-API handler `(request) => Response` (Hono, Next.js route handlers, Bun/Deno-style servers): each
 * request becomes a rollout (see `observe`), `failed` on a 5xx response or a thrown error, and the returned
 * `Response` carries `x-agl-rollout-id` (on a copy when its headers are immutable). The default input reads the
 * body from `request.clone()` (JSON, at most 16 KiB stored), so the handler still reads the original.
 */
export function observeFetch<Req extends Request, Rest extends unknown[]>(
  handler: (request: Req, ...rest: Rest) => Response | Promise<Response>,
  options: ObserveRequestOptions<Req> = {},
): (request: Req, ...rest: Rest) => Promise<Response> {
  return async (request, ...rest) => {
    const input = await chosenInput(options, request, () => fetchInput(request));
    const { input: _ignored, ...base } = options;
    void _ignored;
    let response: Response | undefined;
    try {
      await observe({ ...base, input }, async (rollout) => {
        response = withHeader(await handler(request, ...rest), rollout.rolloutId);
        if (response.status >= 500) throw new ResponseFailure(`the response status was ${response.status}`);
      });
    } catch (error) {
      if (!(error instanceof ResponseFailure)) throw error;
    }
    return response!;
  };
}

async function fetchInput(request: Request): Promise<JsonValue> {
  const url = new URL(request.url, 'http://localhost');
  let body: unknown;
  // A body announced larger than the stored cap is not read at all (no copy of an upload is buffered).
  const length = Number(request.headers.get('content-length') ?? 0);
  if (request.body && !request.bodyUsed && length <= MAX_INPUT_BODY * 4) {
    try {
      const text = await request.clone().text();
      body = text.length > 0 ? text : undefined;
    } catch {
      body = undefined;
    }
  }
  return defaultInput(request.method, url.pathname, body);
}

function withHeader(response: Response, rolloutId: string): Response {
  try {
    response.headers.set(ROLLOUT_ID_HEADER, rolloutId);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    headers.set(ROLLOUT_ID_HEADER, rolloutId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
