import type { EventEmitter } from 'node:events';
import { UpstreamError } from '@agl/core/errors';
import { Agent, type Dispatcher } from 'undici';

/** Options of {@link UpstreamClient}. */
export interface UpstreamClientOptions {
  /** Milliseconds to wait for response headers, and the longest silence between body chunks. */
  timeoutMs: number;
  /** Milliseconds to wait for the TCP connection. */
  connectTimeoutMs: number;
}

/** One backend request. */
export interface UpstreamRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Cancels the request: an `AbortSignal`, or an `EventEmitter` with `aborted` that emits `abort` (undici takes both). */
  signal?: AbortSignal | (EventEmitter & { readonly aborted: boolean });
}

/** Milliseconds taken off a backend's keep-alive hint before an idle connection is dropped (see the constructor). */
export const KEEP_ALIVE_THRESHOLD_MS = 300;

const RESET_CODES = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/** The URL without credentials or query, for messages. */
export function describeUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Converts an undici error into an {@link UpstreamError} (timeout → 504, anything else → 502), with the backend URL
 * and a hint. Aborts caused by the client going away are returned as-is.
 */
export function toUpstreamError(err: unknown, url: URL, timeoutMs: number): unknown {
  if (UpstreamError.isInstance(err)) return err;
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
  if (code === 'UND_ERR_ABORTED' || (err as { name?: unknown } | null)?.name === 'AbortError') return err;
  const where = describeUrl(url);
  if (TIMEOUT_CODES.has(code)) {
    return new UpstreamError(
      'timeout',
      where,
      `The model backend at ${where} did not answer within ${timeoutMs} ms (${code}). Check that the backend is healthy, or raise the gateway's timeout (--timeout-ms).`,
      {
        cause: err,
      },
    );
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new UpstreamError(
    'connection',
    where,
    `Could not reach the model backend at ${where}: ${code ? `${code} ` : ''}${reason}. Check --backend (or the LLM resource's endpoint) and that the backend is running.`,
    {
      cause: err,
    },
  );
}

const targets = new WeakMap<URL, { origin: string; path: string }>();

/** Origin and path of a backend URL, computed once per URL object (the gateway reuses them). */
function targetOf(url: URL): { origin: string; path: string } {
  let target = targets.get(url);
  if (target === undefined) {
    target = { origin: url.origin, path: `${url.pathname}${url.search}` };
    targets.set(url, target);
  }
  return target;
}

/** Keep-alive HTTP client for backends (undici `Agent`, one connection pool per origin). */
export class UpstreamClient {
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(options: UpstreamClientOptions) {
    this.#timeoutMs = options.timeoutMs;
    this.#agent = new Agent({
      keepAliveTimeout: 60_000,
      keepAliveMaxTimeout: 600_000,
      // undici subtracts this from the server's `Keep-Alive: timeout=N` hint; its 2 s default drops every connection to
      // a backend that advertises 1 s (Node's test servers), i.e. one TCP connect per call. A reset on reuse is retried.
      keepAliveTimeoutThreshold: KEEP_ALIVE_THRESHOLD_MS,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.connectTimeoutMs },
      pipelining: 1,
    });
  }

  /**
   * Sends a request; rejects with an {@link UpstreamError} when the backend cannot be reached or times out. A request
   * whose reused keep-alive connection was reset before any answer is sent once more on a fresh connection.
   */
  async send(request: UpstreamRequest): Promise<Dispatcher.ResponseData> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const target = targetOf(request.url);
        return await this.#agent.request({
          origin: target.origin,
          path: target.path,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
          signal: request.signal ?? null,
        });
      } catch (err) {
        const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
        if (attempt === 0 && typeof code === 'string' && RESET_CODES.has(code) && !request.signal?.aborted) continue;
        throw toUpstreamError(err, request.url, this.#timeoutMs);
      }
    }
  }

  /** Reads a whole response body as bytes, mapping a body timeout to an {@link UpstreamError}. */
  async readBytes(response: Dispatcher.ResponseData, url: URL): Promise<Uint8Array> {
    try {
      return await response.body.bytes();
    } catch (err) {
      throw toUpstreamError(err, url, this.#timeoutMs);
    }
  }

  /** Reads a whole response body as text, mapping a body timeout to an {@link UpstreamError}. */
  async readText(response: Dispatcher.ResponseData, url: URL): Promise<string> {
    try {
      return await response.body.text();
    } catch (err) {
      throw toUpstreamError(err, url, this.#timeoutMs);
    }
  }

  /** The configured timeout. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** Closes idle connections. */
  async close(): Promise<void> {
    await this.#agent.close();
  }
}
