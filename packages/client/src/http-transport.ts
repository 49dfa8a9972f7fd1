import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { utf8Text } from '@agl/core/net';
import {
  ConflictError,
  ConnectionError,
  HttpError,
  InvalidTransitionError,
  NotFoundError,
  ValidationError,
  type AglError,
  type ValidationIssue,
} from '@agl/core/errors';

/** Retry and timeout settings of the HTTP transport (AGL 0.3 `LightningStoreClient` defaults). */
export interface TransportOptions {
  /**
   * Server base URL, e.g. `http://127.0.0.1:4747`. Several servers of one shared store (PostgreSQL behind several
   * `agl store serve`) may be given comma-separated; the client fails over to the next when one cannot be reached.
   */
  url: string;
  /** More base URLs of the same store to fail over to (after those in `url`). */
  fallbackUrls?: readonly string[];
  /** Bearer token, when the server requires one. */
  token?: string | null;
  /** Seconds to sleep before retries 1..n; default `[1, 2, 5]` (4 attempts). `[]` = a single attempt. */
  retryDelays?: readonly number[];
  /** Seconds between health probes after a failure; default `[0.1, 0.2, 0.5]`. `[]` skips the probe. */
  healthRetryDelays?: readonly number[];
  /** Longest silence while waiting for the response headers or between body chunks, in ms; default 30 000. */
  requestTimeoutMs?: number;
  /** Time to open a connection, in ms; default 5 000. */
  connectTimeoutMs?: number;
  /** Sleep function (tests inject one that records delays). */
  sleep?: (ms: number) => Promise<void>;
  /**
   * A `node:http` (or `node:https`, for https URLs) agent to use instead of the client's own keep-alive agent. The
   * client speaks plain `node:http`: it never loads an HTTP library that would replace the app's global `fetch`
   * dispatcher.
   */
  agent?: HttpAgent;
  /**
   * No request of this client keeps the process alive (each socket is unref'ed while in use): for background work
   * such as the production recorder's exports and resources reads, which the process end flushes with a deadline of
   * its own. Default false.
   */
  unrefRequests?: boolean;
}

/** One HTTP exchange's raw answer. */
interface Exchanged {
  status: number;
  text: string;
  headers: IncomingHttpHeaders;
}

/** One HTTP answer: status, parsed JSON body (or `undefined`), headers. */
export interface TransportResponse {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** One request. */
export interface TransportRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** The JSON body already serialised (sent as is, instead of `JSON.stringify(body)`). */
  json?: string;
  /** `false` for dequeue: one attempt only. */
  retry?: boolean;
  /** Overrides the request timeout (long polls). */
  timeoutMs?: number;
  /** Cancels the request (long polls cut short by close); an aborted request is never retried. */
  signal?: AbortSignal;
  /** More request headers (e.g. `x-agl-reveal-secrets`). */
  headers?: Record<string, string>;
  /**
   * The request does not keep the process alive (its socket is unref'ed): background exports, which the process end
   * flushes with a deadline of its own.
   */
  unref?: boolean;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `code` of the error when a connection could not be opened within `connectTimeoutMs`. */
const CONNECT_TIMEOUT = 'AGL_CONNECT_TIMEOUT';
/** `code` of the error when the server stayed silent for `requestTimeoutMs`. */
const REQUEST_TIMEOUT = 'AGL_REQUEST_TIMEOUT';

const timeoutError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', CONNECT_TIMEOUT]);

/** True when the error shows the request never reached a server (so no side effect can have happened). */
function neverSent(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: string }).code;
    if (code !== undefined && NEVER_SENT.has(code)) return true;
  }
  return false;
}

/** Parses an error answer into the typed AGL error the server raised, or an {@link HttpError}. */
export function errorFromResponse(status: number, body: unknown): AglError {
  const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const detail = typeof record.detail === 'string' ? record.detail : JSON.stringify(record.detail ?? body ?? null);
  const type = typeof record.error_type === 'string' ? record.error_type : undefined;
  const str = (key: string): string => (typeof record[key] === 'string' ? (record[key] as string) : '');
  switch (type) {
    case 'AGL_NotFoundError':
      return new NotFoundError(str('entity') || 'unknown', str('id'), detail);
    case 'AGL_ValidationError':
      return new ValidationError(detail, Array.isArray(record.issues) ? (record.issues as ValidationIssue[]) : [], {
        status: status === 400 ? 400 : 422,
      });
    case 'AGL_ConflictError':
      return new ConflictError(str('field') || 'unknown', detail);
    case 'AGL_InvalidTransitionError': {
      const entity = str('entity') === 'attempt' ? 'attempt' : 'rollout';
      const id = /transition for (\S+):/.exec(detail)?.[1] ?? '';
      return new InvalidTransitionError(entity, id, str('from'), str('to'));
    }
    default:
      return new HttpError(status, detail, type);
  }
}

/**
 * Keep-alive JSON transport with AGL 0.3's retry contract (reference v0 §3.5): network errors, 408 and 5xx are retried
 * after a health probe, with backoff; other 4xx are raised at once; `retry: false` requests are tried once.
 */
export class HttpTransport {
  /** Every base URL, the current one at `#current`. */
  readonly #urls: string[];
  #current = 0;
  readonly #token: string | null;
  readonly #retryDelays: readonly number[];
  readonly #healthDelays: readonly number[];
  readonly #timeoutMs: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #connectTimeoutMs: number;
  /** The agent in use per protocol; only the client's own are destroyed by `close`. */
  readonly #agents: { http?: HttpAgent; https?: HttpsAgent } = {};
  readonly #ownsAgent: boolean;
  readonly #unref: boolean;

  constructor(options: TransportOptions) {
    this.#urls = [...options.url.split(','), ...(options.fallbackUrls ?? [])]
      .map((u) => u.trim().replace(/\/+$/, ''))
      .filter((u) => u !== '');
    if (this.#urls.length === 0) this.#urls.push(options.url);
    this.#token = options.token ?? null;
    this.#retryDelays = options.retryDelays ?? [1, 2, 5];
    this.#healthDelays = options.healthRetryDelays ?? [0.1, 0.2, 0.5];
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.#ownsAgent = options.agent === undefined;
    this.#unref = options.unrefRequests ?? false;
    if (options.agent) this.#agents = { http: options.agent, https: options.agent as HttpsAgent };
  }

  #agentFor(https: boolean): HttpAgent {
    const agentOptions = { keepAlive: true, maxSockets: 16, maxFreeSockets: 16, scheduling: 'lifo' as const };
    if (https) return (this.#agents.https ??= new HttpsAgent(agentOptions));
    return (this.#agents.http ??= new HttpAgent(agentOptions));
  }

  /** The base URL in use (the first one that answered, after a failover the next). */
  get baseUrl(): string {
    return this.#urls[this.#current]!;
  }

  /** Every configured base URL. */
  get urls(): readonly string[] {
    return this.#urls;
  }

  /** Moves to the next base URL; false when there is only one. */
  #failover(): boolean {
    if (this.#urls.length < 2) return false;
    this.#current = (this.#current + 1) % this.#urls.length;
    return true;
  }

  async #send(request: TransportRequest): Promise<TransportResponse> {
    const headers: Record<string, string> = { ...request.headers, accept: 'application/json' };
    if (this.#token !== null) headers.authorization = `Bearer ${this.#token}`;
    let payload: string | undefined;
    if (request.json !== undefined || request.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = request.json ?? JSON.stringify(request.body);
    }
    const timeout = request.timeoutMs ?? this.#timeoutMs;
    const url = new URL(`${this.baseUrl}${request.path}`);
    const options = { method: request.method, headers, signal: request.signal, unref: request.unref ?? this.#unref };
    let response: Exchanged;
    try {
      response = await this.#exchange(url, options, payload, timeout, true);
    } catch (error) {
      // A kept-alive connection the server had already closed: the request never reached it. Once more, on a new one.
      if (!(error as { staleSocket?: boolean }).staleSocket) throw error;
      response = await this.#exchange(url, options, payload, timeout, false);
    }
    let body: unknown = undefined;
    if (response.text !== '') {
      try {
        body = JSON.parse(response.text);
      } catch {
        body = { detail: response.text };
      }
    }
    return { status: response.status, body, headers: response.headers };
  }

  /** One HTTP exchange over the keep-alive agent: connect timeout, idle timeout, abort signal. */
  #exchange(
    url: URL,
    { unref, ...options }: { method: string; headers: Record<string, string>; signal?: AbortSignal; unref?: boolean },
    payload: string | undefined,
    timeoutMs: number,
    keepAlive: boolean,
  ): Promise<Exchanged> {
    const https = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const agent = keepAlive ? this.#agentFor(https) : false;
      let answered = false;
      const req = (https ? httpsRequest : httpRequest)(url, { ...options, agent }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: utf8Text(Buffer.concat(chunks)), headers: res.headers }),
        );
      });
      req.on('error', (error: Error & { code?: string }) => {
        // Only before any answer: a reset after the server answered means it handled the request.
        const stale = !answered && req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
        reject(stale ? Object.assign(error, { staleSocket: true }) : error);
      });
      req.setTimeout(timeoutMs, () =>
        req.destroy(timeoutError(REQUEST_TIMEOUT, `no answer from the store for ${timeoutMs} ms`)),
      );
      req.on('socket', (socket) => {
        // (A kept-alive socket taken from the pool is ref'ed again by the agent for the next request.)
        if (unref) socket.unref();
        if (!socket.connecting) return;
        const timer = setTimeout(
          () =>
            req.destroy(
              timeoutError(CONNECT_TIMEOUT, `could not connect to ${url.host} within ${this.#connectTimeoutMs} ms`),
            ),
          this.#connectTimeoutMs,
        );
        socket.once('connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      req.end(payload);
    });
  }

  /** True when `GET /v1/agl/health` of some base URL answers 200 within the probe schedule (or when probing is off). */
  async healthy(): Promise<boolean> {
    if (this.#healthDelays.length === 0) return true;
    const delays = [0, ...this.#healthDelays];
    for (const delay of delays) {
      if (delay > 0) await this.#sleep(delay * 1000);
      // With several servers, any healthy one will do: probe each, and stay on the first that answers.
      for (let k = 0; k < this.#urls.length; k += 1) {
        try {
          const response = await this.#send({ method: 'GET', path: '/v1/agl/health', timeoutMs: 5_000 });
          if (response.status === 200) return true;
        } catch {
          // probe the next one, or again
        }
        this.#failover();
      }
    }
    return false;
  }

  /** Sends one request with the retry contract; resolves with a 2xx answer or throws a typed error. */
  async call(request: TransportRequest): Promise<TransportResponse> {
    const delays = request.retry === false ? [0] : [0, ...this.#retryDelays];
    let lastError: AglError | null = null;
    // Failovers to the other servers happen at once, without a backoff step; each URL at most once per step.
    let failovers = 0;
    for (let i = 0; i < delays.length; i += 1) {
      const delay = delays[i]!;
      if (delay > 0 && failovers === 0) await this.#sleep(delay * 1000);
      let response: TransportResponse;
      try {
        response = await this.#send(request);
      } catch (error) {
        if (request.signal?.aborted) throw error;
        // A request that never reached a server (refused, unknown host, connect timeout) is safe to send elsewhere,
        // even a dequeue; any other failure of a one-shot request might have been applied, so it is not re-sent.
        const safe = request.retry !== false || neverSent(error);
        if (safe && failovers < this.#urls.length - 1 && this.#failover()) {
          failovers += 1;
          i -= 1;
          continue;
        }
        failovers = 0;
        lastError = new ConnectionError(
          `${this.baseUrl}${request.path}`,
          `Could not reach the AGL store at ${this.baseUrl} (${request.method} ${request.path}): ${(error as Error).message}. ` +
            'Check that `agl store serve` is running and that the URL (AGL_STORE_URL) is right.',
          { cause: error },
        );
        if (i < delays.length - 1 && !(await this.healthy())) break;
        continue;
      }
      if (response.status < 400) return response;
      const error = errorFromResponse(response.status, response.body);
      if (response.status !== 408 && response.status < 500) throw error;
      lastError = error;
      // A draining server (503) or one whose database is down (5xx): the next server may answer.
      if (request.retry !== false && failovers < this.#urls.length - 1 && this.#failover()) {
        failovers += 1;
        i -= 1;
        continue;
      }
      failovers = 0;
      if (i < delays.length - 1 && !(await this.healthy())) break;
    }
    throw lastError ?? new HttpError(0, 'no attempt was made');
  }

  /** Closes the keep-alive connections (only those of the client's own agents). */
  async close(): Promise<void> {
    if (!this.#ownsAgent) return;
    this.#agents.http?.destroy();
    this.#agents.https?.destroy();
  }
}
