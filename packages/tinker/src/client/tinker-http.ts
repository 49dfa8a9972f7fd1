import { randomUUID } from 'node:crypto';
import { ConnectionError, UserError } from '@agl/core/errors';
import { TinkerApiError } from './tinker-errors';

/** Hosted Tinker's base URL (the SDK's default). */
export const DEFAULT_TINKER_BASE_URL = 'https://tinker.thinkingmachines.dev/services/tinker-prod';

/** The SDK version whose wire this client speaks; sent as `sdk_version`. */
export const TINKER_SDK_WIRE_VERSION = '0.25.0';

/** Connection and retry options shared by every Tinker client. */
export interface TinkerConnectionOptions {
  /** The API key (sent as `X-API-Key`, only to `baseUrl`). Default: `TINKER_API_KEY`. */
  apiKey?: string;
  /** The service's base URL (hosted Tinker, or a self-hosted server). Default: `TINKER_BASE_URL`, else hosted Tinker. */
  baseUrl?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Retries of a failed submit (408, 409, 429, 5xx, connection errors). Default 10, as the SDK. */
  maxRetries?: number;
  /** First backoff delay in ms (doubles per retry, ±25 % jitter). Default 500, as the SDK. */
  retryDelayMs?: number;
  /** Largest backoff delay in ms. Default 10 000, as the SDK. */
  maxRetryDelayMs?: number;
  /** Per-request timeout in ms. Default 60 000 (retrieve_future: 45 000), as the SDK. */
  timeoutMs?: number;
  /** The fetch to use (tests). Default: global fetch. */
  fetch?: typeof fetch;
  /** How to wait between retries (tests inject a clock). Default: a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Environment to read `TINKER_API_KEY` / `TINKER_BASE_URL` from. Default: `process.env`. */
  env?: Record<string, string | undefined>;
}

/** A raw answer. */
export interface TinkerResponse {
  status: number;
  contentType: string;
  bytes: Uint8Array;
}

/** Options of one request. */
export interface TinkerRequestOptions {
  method?: 'GET' | 'POST';
  /** A JSON value, or raw bytes with `contentType`. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Retry retryable answers with backoff (submits). Off for retrieve_future, whose loop has its own rules. */
  retry?: boolean;
  timeoutMs?: number;
}

/** Statuses the SDK retries on submit (`retry_handler.is_retryable_status_code`). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status < 600);
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The service's message from an error body: FastAPI's `detail` (string or list), else `error`, else the text. */
export function errorDetail(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes);
  try {
    const body = JSON.parse(text) as { detail?: unknown; error?: unknown; message?: unknown };
    const detail = body.detail ?? body.error ?? body.message;
    if (typeof detail === 'string') return detail;
    // FastAPI's validation answer: [{ loc: ['body', 'field', …], msg }].
    if (Array.isArray(detail)) {
      return detail
        .map(
          (issue: { loc?: unknown[]; msg?: string }) =>
            `${(issue.loc ?? []).filter((part) => part !== 'body').join('.') || 'body'}: ${issue.msg ?? JSON.stringify(issue)}`,
        )
        .join('; ');
    }
    if (detail !== undefined) return JSON.stringify(detail);
  } catch {
    // not JSON
  }
  return text.trim() || '(empty body)';
}

/** Parses a JSON answer body. */
export function jsonBody<T>(call: string, response: TinkerResponse): T {
  const text = new TextDecoder().decode(response.bytes);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new TinkerApiError(call, response.status, `the answer is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * HTTP to one Tinker base URL: the key in `X-API-Key`, an idempotency key per request, and the SDK's retry rules for
 * submits (exponential backoff with jitter on 408/409/429/5xx and connection errors).
 */
export class TinkerHttp {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #options: TinkerConnectionOptions;
  readonly #fetch: typeof fetch;
  readonly sleep: (ms: number) => Promise<void>;
  /** The auth value sent as `X-API-Key` (the key, or the JWT the server exchanged it for). */
  #authValue: string | undefined;

  constructor(options: TinkerConnectionOptions = {}) {
    const env = options.env ?? process.env;
    this.baseUrl = (options.baseUrl ?? env.TINKER_BASE_URL ?? DEFAULT_TINKER_BASE_URL).replace(/\/+$/, '');
    this.#apiKey = options.apiKey ?? env.TINKER_API_KEY;
    if (!this.#apiKey && this.baseUrl === DEFAULT_TINKER_BASE_URL) {
      throw new UserError(
        'Tinker: no API key. Set TINKER_API_KEY (from the Tinker console), pass apiKey, or point TINKER_BASE_URL at a self-hosted Tinker-compatible server',
      );
    }
    this.#authValue = this.#apiKey;
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? defaultSleep;
  }

  /** The configured API key (for the JWT exchange). */
  get apiKey(): string | undefined {
    return this.#apiKey;
  }

  /** Replaces the value sent as `X-API-Key` (a JWT from `/api/v1/auth/token`). */
  setAuthValue(value: string): void {
    this.#authValue = value;
  }

  /** The backoff before retry number `attempt` (0-based), as the SDK computes it. */
  retryDelay(attempt: number): number {
    const base = this.#options.retryDelayMs ?? 500;
    const max = this.#options.maxRetryDelayMs ?? 10_000;
    const delay = Math.min(base * 2 ** attempt, max);
    const jitter = delay * 0.25 * (2 * Math.random() - 1);
    return Math.max(0, Math.min(delay + jitter, max));
  }

  /** One request; with `retry`, retried as the SDK retries submits. Throws {@link TinkerApiError} on a final 4xx/5xx. */
  async request(call: string, path: string, options: TinkerRequestOptions = {}): Promise<TinkerResponse> {
    const maxRetries = options.retry ? (this.#options.maxRetries ?? 10) : 0;
    const idempotencyKey = `agl-tinker-${randomUUID()}`;
    for (let attempt = 0; ; attempt++) {
      let response: TinkerResponse;
      try {
        response = await this.#once(path, options, idempotencyKey, attempt);
      } catch (error) {
        if (attempt < maxRetries) {
          await this.sleep(this.retryDelay(attempt));
          continue;
        }
        throw new ConnectionError(
          `${this.baseUrl}${path}`,
          `Tinker ${call}: could not reach ${this.baseUrl}${path} (${(error as Error).message}); check TINKER_BASE_URL and the network`,
          { cause: error },
        );
      }
      if (response.status < 400) return response;
      // A bare 400 with no body is a proxy's reject (the SDK retries it).
      const bare400 = response.status === 400 && response.bytes.byteLength === 0;
      if ((isRetryableStatus(response.status) || bare400) && attempt < maxRetries) {
        await this.sleep(this.retryDelay(attempt));
        continue;
      }
      return response;
    }
  }

  /** Like {@link request}, but a 4xx/5xx answer throws {@link TinkerApiError} naming the call. */
  async requestOk(call: string, path: string, options: TinkerRequestOptions = {}): Promise<TinkerResponse> {
    const response = await this.request(call, path, options);
    if (response.status >= 400) throw this.apiError(call, response);
    return response;
  }

  /** A POST of JSON whose JSON answer is returned. */
  async postJson<T>(call: string, path: string, body: unknown, retry = true): Promise<T> {
    return jsonBody<T>(call, await this.requestOk(call, path, { method: 'POST', body, retry }));
  }

  /** The error for an error answer. */
  apiError(call: string, response: TinkerResponse): TinkerApiError {
    const hint =
      response.status === 401 || response.status === 403
        ? 'check TINKER_API_KEY'
        : response.status === 404
          ? `check TINKER_BASE_URL (${this.baseUrl})`
          : undefined;
    return new TinkerApiError(call, response.status, errorDetail(response.bytes), hint ? { hint } : {});
  }

  async #once(
    path: string,
    options: TinkerRequestOptions,
    idempotencyKey: string,
    attempt: number,
  ): Promise<TinkerResponse> {
    const method = options.method ?? 'POST';
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': `agl-tinker/${TINKER_SDK_WIRE_VERSION}`,
      ...this.#options.headers,
      ...options.headers,
    };
    if (this.#authValue) headers['X-API-Key'] = this.#authValue;
    // `Uint8Array<ArrayBuffer>`: what `fetch` takes under both Node's and the DOM's typings.
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (method !== 'GET') {
      headers['X-Idempotency-Key'] = idempotencyKey;
      if (attempt > 0) headers['X-Stainless-Retry-Count'] = String(attempt);
      if (options.body instanceof Uint8Array) {
        body = options.body as Uint8Array<ArrayBuffer>;
        headers['Content-Type'] = options.contentType ?? 'application/octet-stream';
      } else {
        body = JSON.stringify(options.body ?? {});
        headers['Content-Type'] = 'application/json';
      }
    }
    const res = await this.#fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? this.#options.timeoutMs ?? 60_000),
    });
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      bytes: new Uint8Array(await res.arrayBuffer()),
    };
  }
}
