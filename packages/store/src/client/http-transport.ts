import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import {
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
  /** Server base URL, e.g. `http://127.0.0.1:4747`. */
  url: string;
  /** Bearer token, when the server requires one. */
  token?: string | null;
  /** Seconds to sleep before retries 1..n; default `[1, 2, 5]` (4 attempts). `[]` = a single attempt. */
  retryDelays?: readonly number[];
  /** Seconds between health probes after a failure; default `[0.1, 0.2, 0.5]`. `[]` skips the probe. */
  healthRetryDelays?: readonly number[];
  /** Time to wait for the response headers and body, in ms; default 30 000. */
  requestTimeoutMs?: number;
  /** Time to open a connection, in ms; default 5 000. */
  connectTimeoutMs?: number;
  /** Sleep function (tests inject one that records delays). */
  sleep?: (ms: number) => Promise<void>;
  /** An undici dispatcher to use instead of the client's own keep-alive agent. */
  dispatcher?: Dispatcher;
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
  /** `false` for dequeue: one attempt only. */
  retry?: boolean;
  /** Overrides the request timeout (long polls). */
  timeoutMs?: number;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
  readonly baseUrl: string;
  readonly #token: string | null;
  readonly #retryDelays: readonly number[];
  readonly #healthDelays: readonly number[];
  readonly #timeoutMs: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;

  constructor(options: TransportOptions) {
    this.baseUrl = options.url.replace(/\/+$/, '');
    this.#token = options.token ?? null;
    this.#retryDelays = options.retryDelays ?? [1, 2, 5];
    this.#healthDelays = options.healthRetryDelays ?? [0.1, 0.2, 0.5];
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({ keepAliveTimeout: 60_000, connect: { timeout: options.connectTimeoutMs ?? 5_000 }, connections: 16 });
  }

  async #send(request: TransportRequest): Promise<TransportResponse> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#token !== null) headers.authorization = `Bearer ${this.#token}`;
    let payload: string | undefined;
    if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(request.body);
    }
    const timeout = request.timeoutMs ?? this.#timeoutMs;
    const response = await undiciRequest(`${this.baseUrl}${request.path}`, {
      method: request.method,
      headers,
      body: payload,
      dispatcher: this.#dispatcher,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await response.body.text();
    let body: unknown = undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = { detail: text };
      }
    }
    return { status: response.statusCode, body, headers: response.headers };
  }

  /** True when `GET /v1/agl/health` answers 200 within the health probe schedule (or when probing is off). */
  async healthy(): Promise<boolean> {
    if (this.#healthDelays.length === 0) return true;
    const delays = [0, ...this.#healthDelays];
    for (const delay of delays) {
      if (delay > 0) await this.#sleep(delay * 1000);
      try {
        const response = await this.#send({ method: 'GET', path: '/v1/agl/health', timeoutMs: 5_000 });
        if (response.status === 200) return true;
      } catch {
        // probe again
      }
    }
    return false;
  }

  /** Sends one request with the retry contract; resolves with a 2xx answer or throws a typed error. */
  async call(request: TransportRequest): Promise<TransportResponse> {
    const delays = request.retry === false ? [0] : [0, ...this.#retryDelays];
    let lastError: AglError | null = null;
    for (let i = 0; i < delays.length; i += 1) {
      const delay = delays[i]!;
      if (delay > 0) await this.#sleep(delay * 1000);
      let response: TransportResponse;
      try {
        response = await this.#send(request);
      } catch (error) {
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
      if (i < delays.length - 1 && !(await this.healthy())) break;
    }
    throw lastError ?? new HttpError(0, 'no attempt was made');
  }

  /** Closes the keep-alive connections (only those of the client's own agent). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}
