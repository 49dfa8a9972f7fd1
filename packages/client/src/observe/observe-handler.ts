import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JsonValue } from '@agl/core/schema';
import { observeLazily, type ObservedRollout, type ObserveOptions } from './observe';
import { getObserver, warnOnce } from './observe-config';

/** The response header that carries the request's rollout id (for `feedback` later). */
export const ROLLOUT_ID_HEADER = 'x-agl-rollout-id';

/** Largest request body (characters of JSON) stored as the default input; a longer one is cut and marked. */
const MAX_INPUT_BODY = 16 * 1024;

/** Options of {@link observeHandler} and {@link observeFetch}. */
export interface ObserveRequestOptions<Req> extends Omit<ObserveOptions, 'input' | 'unitKey'> {
  /** Chooses the stored task input. Default `{ method, path, body }` with a size-capped JSON body. */
  input?: (request: Req) => JsonValue | Promise<JsonValue>;
  /**
   * While a release runs, the key that picks the request's arm: a user or session id, so a user stays on one arm (also
   * while the share grows). Default (or when it returns nothing or throws): the rollout id.
   */
  unitKey?: (request: Req) => string | undefined | null;
}

/** `options.unitKey(request)`, or undefined (the rollout id then) when there is none, it gives none, or it throws. */
function chosenUnitKey<Req>(options: ObserveRequestOptions<Req>, request: Req): string | undefined {
  if (!options.unitKey) return undefined;
  try {
    const key = options.unitKey(request);
    return typeof key === 'string' && key !== '' ? key : undefined;
  } catch (error) {
    warnOnce(
      getObserver().logger,
      'unitKey',
      `[agl observe] options.unitKey threw (${String(error)}); the rollout id picks the release arm instead (warned once).`,
    );
    return undefined;
  }
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

/**
 * `options.input(request)`, or the default input when there is none or it throws (AGL never fails a request). Only a
 * promise when `options.input` or the fallback is asynchronous.
 */
function chosenInput<Req>(
  options: ObserveRequestOptions<Req>,
  request: Req,
  fallback: () => JsonValue | Promise<JsonValue>,
): JsonValue | Promise<JsonValue> {
  return options.input ? userInput(options.input, request, fallback) : fallback();
}

async function userInput<Req>(
  input: (request: Req) => JsonValue | Promise<JsonValue>,
  request: Req,
  fallback: () => JsonValue | Promise<JsonValue>,
): Promise<JsonValue> {
  try {
    return await input(request);
  } catch (error) {
    warnOnce(
      getObserver().logger,
      'input',
      `[agl observe] options.input threw (${String(error)}); the default input is stored instead (warned once).`,
    );
  }
  return fallback();
}

/** Why a request's rollout failed although its handler did not throw (a 5xx, an aborted response). */
class ResponseFailure extends Error {
  override name = 'ResponseFailure';
}

const requestRollouts = new WeakMap<object, ObservedRollout>();

/**
 * The rollout of a request inside `observeHandler` (pass its `req`) or `observeFetch` (pass its `Request`; Hono:
 * `c.req.raw`): its id, whether it is recorded, and `resources` (the latest published prompt and model, or while a
 * release runs its arm's, also for a request that sampling left out). `undefined` outside an observed handler. Read it in the handler to serve the request
 * with the published resources.
 */
export function observedRollout(req: object): ObservedRollout | undefined {
  return requestRollouts.get(req);
}

/** Settles when the response has finished: rejects when it failed (a 5xx status, closed before it finished). */
function responseDone(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve, reject) => {
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
}

/** An error an Express / Connect handler passed to `next(error)` (`'route'` and `'router'` only skip routes). */
function isPassedError(error: unknown): boolean {
  return error !== undefined && error !== null && error !== false && error !== 'route' && error !== 'router';
}

/**
 * Wraps a `(req, res)` handler (node:http, Express, Connect): each recorded request becomes a rollout (see `observe`)
 * that ends when the response finishes: `failed` on a 5xx status, a thrown error, an error passed to `next(error)`
 * (Express, Connect) or a response closed before it finished. The response carries `x-agl-rollout-id`. The default
 * input never reads the request stream: it is `{ method, path }`, plus `body` only when a body parser already set
 * `req.body` (Express `express.json()`). The handler's own errors are rethrown unchanged; an error passed to `next`
 * still goes to `next`. A request that is not recorded (no store, or left out by `sampleRate`) runs the handler as
 * it is: no header, the same `req` and `res`.
 */
export function observeHandler(
  handler: (req: IncomingMessage, res: ServerResponse) => unknown,
  options?: ObserveRequestOptions<IncomingMessage>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
// The overload above comes first so that a whole Express app, typed both as `(req, res)` and `(req, res, next)`, is
// taken as a node:http listener: `createServer(observeHandler(app))`.
export function observeHandler<Req extends IncomingMessage, Res extends ServerResponse, Rest extends unknown[]>(
  handler: (req: Req, res: Res, ...rest: Rest) => unknown,
  options?: ObserveRequestOptions<Req>,
): (req: Req, res: Res, ...rest: Rest) => Promise<void>;
export function observeHandler<Req extends IncomingMessage, Res extends ServerResponse, Rest extends unknown[]>(
  handler: (req: Req, res: Res, ...rest: Rest) => unknown,
  options: ObserveRequestOptions<Req> = {},
): (req: Req, res: Res, ...rest: Rest) => Promise<void> {
  const { input: _ignored, unitKey: _key, ...base } = options;
  void _ignored;
  void _key;
  return async (req, res, ...rest) => {
    let passed: { error: unknown } | null = null;
    const input = (): JsonValue | Promise<JsonValue> =>
      chosenInput(options, req, () => defaultInput(req.method, req.url, (req as { body?: unknown }).body));
    const unitKey = chosenUnitKey(options, req);
    try {
      await observeLazily(
        unitKey === undefined ? base : { ...base, unitKey },
        input,
        async (rollout: ObservedRollout) => {
          requestRollouts.set(req, rollout);
          if (!rollout.recorded) {
            await handler(req, res, ...rest);
            return;
          }
          if (!res.headersSent) res.setHeader(ROLLOUT_ID_HEADER, rollout.rolloutId);
          const done = responseDone(res);
          const next = rest[0];
          if (typeof next === 'function') {
            rest[0] = (error: unknown, ...more: unknown[]): unknown => {
              if (isPassedError(error)) passed = { error };
              return (next as (...args: unknown[]) => unknown)(error, ...more);
            };
          }
          try {
            await handler(req, res, ...rest);
          } catch (error) {
            done.catch(() => undefined);
            throw error;
          }
          // The error handed to next() is the rollout's failure (recorded as is), whatever status the app answered.
          try {
            await done;
          } catch (error) {
            throw passed ? passed.error : error;
          }
          if (passed) throw passed.error;
        },
      );
    } catch (error) {
      // A failed response is the app's business (Express answered the error passed to next): only an error the
      // handler threw goes back to the caller. (`passed` is set inside the handler's `next`.)
      const handed = passed as { error: unknown } | null;
      if (error instanceof ResponseFailure || (handed && error === handed.error)) return;
      throw error;
    }
  };
}

/**
 * Wraps a Fetch-API handler `(request) => Response` (Hono's `app.fetch`, Next.js route handlers, Bun/Deno-style
 * servers): each recorded request becomes a rollout (see `observe`) that ends when the response body has been sent
 * (so the spans of a streamed answer belong to it): `failed` on a thrown error, a 5xx status, or a body stream that
 * errored or was cancelled (client aborted). The returned `Response` is a copy that carries `x-agl-rollout-id`, with
 * the same status, headers and body. The default input reads the body from `request.clone()` (JSON, at most 16 KiB
 * stored), so the handler still reads the original. A request that is not recorded (no store, or left out by
 * `sampleRate`) gets the handler's own `Response`, untouched, and its request is not read.
 */
export function observeFetch<Req extends Request, Rest extends unknown[]>(
  handler: (request: Req, ...rest: Rest) => Response | Promise<Response>,
  options: ObserveRequestOptions<Req> = {},
): (request: Req, ...rest: Rest) => Promise<Response> {
  const { input: _ignored, unitKey: _key, ...base } = options;
  void _ignored;
  void _key;
  return (request, ...rest) =>
    new Promise<Response>((resolve, reject) => {
      const input = (): JsonValue | Promise<JsonValue> => chosenInput(options, request, () => fetchInput(request));
      const unitKey = chosenUnitKey(options, request);
      observeLazily(unitKey === undefined ? base : { ...base, unitKey }, input, async (rollout) => {
        requestRollouts.set(request, rollout);
        const response = await handler(request, ...rest);
        if (!rollout.recorded) return resolve(response);
        const sent = trackedResponse(response, rollout.rolloutId);
        resolve(sent.response);
        await sent.done;
        if (response.status >= 500) throw new ResponseFailure(`the response status was ${response.status}`);
      }).catch(
        // Before the response is resolved this is the handler's own error; after, a no-op (the failure is recorded).
        reject,
      );
    });
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

/**
 * A copy of `response` with the rollout header, whose body is piped through so that `done` settles when the body has
 * been read to its end (rejects when it errored or the reader cancelled it).
 */
function trackedResponse(response: Response, rolloutId: string): { response: Response; done: Promise<void> } {
  // Response.error() (status 0) and the like cannot be copied: served as they are.
  if (response.status < 200 || response.status > 599) return { response, done: Promise.resolve() };
  const headers = new Headers(response.headers);
  headers.set(ROLLOUT_ID_HEADER, rolloutId);
  const init = { status: response.status, statusText: response.statusText, headers };
  if (!response.body) return { response: new Response(null, init), done: Promise.resolve() };
  const pipe = new TransformStream<Uint8Array, Uint8Array>();
  const done = response.body.pipeTo(pipe.writable);
  return { response: new Response(pipe.readable, init), done };
}
