import type { IncomingMessage, ServerResponse } from 'node:http';
import { UserError } from '@agl/core/errors';
import { sendError } from '../routes/http-io';

/** Request headers a browser page on an allowed origin may send (the OpenAI and Anthropic SDKs' own included). */
const ALLOWED_HEADER =
  /^(authorization|content-type|x-api-key|anthropic-[a-z0-9-]+|openai-[a-z0-9-]+|x-stainless-[a-z0-9-]+|x-rollout-id|x-attempt-id|traceparent|tracestate)$/;
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * A JSON media type: `application/json` or `application/<x>+json`, with any parameters (`; charset=utf-8`). Browsers
 * can send only `text/plain`, `application/x-www-form-urlencoded` and `multipart/form-data` without a CORS preflight.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** Whether the request carries a body (a length above zero, or a chunked body). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length.trim() !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

/**
 * The origins of `--cors-origin`, each normalised (`scheme://host[:port]`, lower case, no path). `*` and `null` are
 * refused: a gateway spends its backend key for any caller, so each page that may call it is named.
 */
export function parseCorsOrigins(origins: readonly string[] | null | undefined): Set<string> {
  const out = new Set<string>();
  for (const raw of origins ?? []) {
    const value = raw.trim();
    if (value === '*' || value.toLowerCase() === 'null')
      throw new UserError(
        `Invalid gateway --cors-origin ${JSON.stringify(raw)}: name each page's origin (e.g. http://localhost:5173); "*" and "null" are refused because a browser page could spend the backend key.`,
      );
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new UserError(
        `Invalid gateway --cors-origin ${JSON.stringify(raw)}: use an origin such as http://localhost:5173 (scheme, host and port).`,
      );
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.pathname !== '/' && url.pathname !== ''))
      throw new UserError(
        `Invalid gateway --cors-origin ${JSON.stringify(raw)}: use an http(s) origin without a path, such as http://localhost:5173.`,
      );
    out.add(url.origin);
  }
  return out;
}

/**
 * Keeps web pages from driving the gateway (`--cors-origin` names the pages that may):
 * - a request carrying `Origin` from any other page is refused (403 `origin_not_allowed`), preflight or not; a
 *   browser sends `Origin` with every cross-origin POST, even the "simple" ones that skip the preflight;
 * - a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered (204) only for an allowed origin,
 *   for that origin only;
 * - bodies that are not JSON: {@link refuseNonJsonBody}.
 *
 * Runs before the token check (a preflight carries no credentials). Returns true when it answered the request (the caller stops), false when the request goes on; responses to an
 * allowed origin then carry `Access-Control-Allow-Origin` for it.
 */
export function guardBrowserRequest(allowed: ReadonlySet<string>, req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  if (origin !== undefined && !allowed.has(origin)) {
    sendError(res, {
      status: 403,
      errorType: 'origin_not_allowed',
      detail: `Requests from the web page origin ${JSON.stringify(origin)} are refused: a page could spend the backend key or pause the gateway. Start the gateway with --cors-origin ${origin === 'null' ? '<the page origin>' : origin} to allow that page.`,
    });
    return true;
  }
  if (origin !== undefined) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
  }
  if (preflight) {
    if (origin === undefined) {
      sendError(res, {
        status: 403,
        errorType: 'origin_not_allowed',
        detail: 'A CORS preflight without an Origin header is refused.',
      });
      return true;
    }
    const method = String(req.headers['access-control-request-method']).toUpperCase();
    const asked = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== '');
    const refusedHeader = asked.find((h) => !ALLOWED_HEADER.test(h));
    if ((method !== 'GET' && method !== 'POST') || refusedHeader !== undefined) {
      res.removeHeader('access-control-allow-origin');
      sendError(res, {
        status: 403,
        errorType: 'cors_not_allowed',
        detail:
          refusedHeader !== undefined
            ? `The header ${JSON.stringify(refusedHeader)} may not be sent from a web page; the gateway allows authorization, content-type, x-api-key and the OpenAI and Anthropic SDK headers.`
            : `The method ${method} is not served to web pages; use GET or POST.`,
      });
      return true;
    }
    res.writeHead(204, {
      'access-control-allow-methods': 'GET, POST',
      ...(asked.length > 0 ? { 'access-control-allow-headers': asked.join(', ') } : {}),
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      'content-length': '0',
    });
    res.end();
    return true;
  }
  return false;
}

/**
 * Refuses a body whose `Content-Type` is not JSON (415 `unsupported_media_type`), on every route, the control routes
 * (`/proxy/pause`) included, whoever sends it; runs after the token check. Returns true when it answered.
 */
export function refuseNonJsonBody(req: IncomingMessage, res: ServerResponse): boolean {
  if (hasBody(req) && !isJsonContentType(req.headers['content-type'])) {
    const given = req.headers['content-type'];
    // The body is not read: close the connection after the answer rather than drain it.
    res.setHeader('connection', 'close');
    sendError(res, {
      status: 415,
      errorType: 'unsupported_media_type',
      detail: `Unsupported Content-Type ${given === undefined ? '(none)' : JSON.stringify(given)}: the gateway takes JSON bodies only. Send the body with the header 'Content-Type: application/json'.`,
    });
    return true;
  }
  return false;
}
