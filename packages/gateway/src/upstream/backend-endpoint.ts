import { UserError } from '@agl/core/errors';
import { isLoopbackHost } from '@agl/core/net';
import { RequestRefusedError } from '../routes/call-errors';

/**
 * A backend base URL, parsed once: `http(s)`, no fragment, no credentials. Upstream URLs are built only by appending
 * known route segments to its path ({@link BackendEndpoint.url}); client-supplied text is never resolved against it.
 */
export class BackendEndpoint {
  /** `scheme://host[:port]`, as `URL.origin` writes it. */
  readonly origin: string;
  /** The base URL as the gateway uses it: origin, path without a trailing slash, and the query if any. */
  readonly href: string;
  readonly hostname: string;
  /** The port, the scheme's default when the URL names none. */
  readonly port: number;
  readonly #base: string;
  readonly #search: string;
  readonly #urls = new Map<string, URL>();

  private constructor(url: URL) {
    this.origin = url.origin;
    this.hostname = url.hostname;
    this.port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    this.#base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    this.#search = url.search;
    this.href = `${this.#base}${this.#search}`;
  }

  /** Parses an endpoint, or returns why it is refused (the caller words the error). */
  static parse(text: string): BackendEndpoint | string {
    let url: URL;
    try {
      url = new URL(text.trim());
    } catch {
      return 'is not a URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return `uses ${url.protocol.slice(0, -1)}; only http and https are allowed`;
    if (text.includes('#')) return 'has a fragment (#); a backend base URL has none';
    if (url.username !== '' || url.password !== '')
      return 'carries credentials; put the key in the resource’s api_key instead';
    return new BackendEndpoint(url);
  }

  /**
   * The upstream URL of a route below this endpoint: `route` is made of known segments (`chat/completions`) and, for
   * `models/{id}`, an id already encoded with `encodeURIComponent` and never `.` or `..`. Parsed once per route.
   */
  url(route: string): URL {
    let url = this.#urls.get(route);
    if (url === undefined) {
      url = new URL(`${this.#base}/${route}${this.#search}`);
      if (url.origin !== this.origin || !url.pathname.startsWith(`${this.#base.slice(this.origin.length)}/`)) {
        throw new RequestRefusedError(
          400,
          'invalid_request',
          `The route "${route}" would leave the backend's base URL ${this.href}; the gateway refuses it.`,
        );
      }
      if (this.#urls.size >= 64) this.#urls.clear();
      this.#urls.set(route, url);
    }
    return url;
  }

  /** True when this endpoint names the listener `self` (same origin, or both loopback names on the same port). */
  isSelf(self: BackendEndpoint): boolean {
    if (this.origin === self.origin) return true;
    return this.port === self.port && isLoopbackHost(this.hostname) && isLoopbackHost(self.hostname);
  }
}

/**
 * The origin of an `--allow-backend` value (`http://10.0.0.5:8000`, a trailing `/` accepted); throws a `UserError`
 * naming the fix for anything else (a path, a query, another scheme).
 */
export function allowedOrigin(text: string): string {
  const endpoint = BackendEndpoint.parse(text);
  const fix = `Give --allow-backend (allowBackends) an origin such as http://10.0.0.5:8000, got "${text}".`;
  if (typeof endpoint === 'string') throw new UserError(`${fix} It ${endpoint}.`);
  if (endpoint.href !== endpoint.origin) throw new UserError(`${fix} An origin has no path or query.`);
  return endpoint.origin;
}
