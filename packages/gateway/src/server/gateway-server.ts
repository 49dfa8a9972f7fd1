import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UserError } from '@agl/core/errors';
import { hostHeaderAllowed, hostRefusedDetail } from '@agl/core/net';
import { type Clock, type LightningStore, systemClock } from '@agl/core/store';
import { StoreBatcher } from '../recording/store-batcher';
import { sendCallError } from '../routes/call-errors';
import { parseGatewayPath } from '../routes/gateway-path';
import { sendError, sendJson } from '../routes/http-io';
import { handleLlmCall, type LlmCallContext } from '../routes/llm-call';
import { handleModels } from '../routes/models-route';
import { handlePauseRoute } from '../routes/pause-routes';
import { allowedOrigin, BackendEndpoint } from '../upstream/backend-endpoint';
import { type BackendConfig, BackendResolver, type ConfiguredBackend } from '../upstream/backend-resolver';
import type { AnthropicMode, TokenIdPolicy, TrainOverrides } from '../upstream/call-plan';
import { startGatewayTinker, type TinkerGatewayOptions } from '../upstream/tinker-routing';
import { UpstreamClient } from '../upstream/upstream-client';
import { PauseController, type PauseState } from './pause-controller';

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** Where call spans go (embedded store or `StoreClient`). */
  store: LightningStore;
  /** Default backend: a base URL such as `http://127.0.0.1:8000/v1`, or `{ baseUrl, apiKey }`. */
  backend?: string | BackendConfig | null;
  /**
   * Backend API key (when `backend` is a string); never forwarded from clients, logged or stored. It is sent only to
   * the configured backend's origin, never to an endpoint an LLM resource names elsewhere.
   */
  backendApiKey?: string | null;
  /**
   * Origins (`http://10.0.0.5:8000`) an LLM resource's endpoint may name besides the configured backend's, which is
   * always allowed (`--allow-backend`). A resource naming any other origin makes its calls fail with 403
   * `backend_not_allowed`. Calls to these origins carry the resource's own `api_key`, or none. Default: none, except
   * that a gateway with neither `backend` nor `allowBackends` follows any http(s) endpoint the resources name (it has
   * no key of its own to leak).
   */
  allowBackends?: readonly string[];
  /** Model name to request instead of the client's (an LLM resource's model wins). */
  model?: string | null;
  /** Name of the LLM resource to route by (default `main_llm`, else the first LLM resource). */
  llmResourceName?: string | null;
  /** Port on `host`; default 4748, 0 picks a free one. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /**
   * Host names (`Host` header, port ignored) a gateway bound to a loopback address answers besides `localhost`,
   * `127.0.0.1` and `[::1]` (`--allowed-host`). Other `Host` values get 403 `host_not_allowed` (DNS rebinding).
   * Ignored when `host` is not a loopback address.
   */
  allowedHosts?: readonly string[];
  /** When set, every route but `/healthz` needs `Authorization: Bearer <token>` or `x-api-key: <token>`. */
  token?: string | null;
  /** When to ask the backend for token ids and logprobs: `train` (default), `scoped` (every rollout call) or `never`. */
  tokenIds?: TokenIdPolicy;
  /** Anthropic `/v1/messages`: `auto` (default; translate training calls and backends without `/messages`), `passthrough` or `translate`. */
  anthropic?: AnthropicMode;
  /** Model and sampling overrides for training calls (also settable later with `setTrainOverrides`). */
  trainOverrides?: TrainOverrides;
  /** Milliseconds to wait for backend headers, and the longest silence inside a stream (default 300,000). */
  timeoutMs?: number;
  /** Milliseconds to wait for a backend connection (default 10,000). */
  connectTimeoutMs?: number;
  /**
   * Largest accepted LLM-call body in bytes (default 32 MiB); such a body also may not hold more than 500,000 JSON
   * values or nest deeper than 256 levels. Control routes take 16 KiB.
   */
  maxBodyBytes?: number;
  /** How long rollouts and resources are cached for routing, in ms (default 1,000; 0 disables). */
  routeCacheTtlMs?: number;
  /**
   * When a call's span goes to the store. Either way the sequence id is taken before the answer goes out, and a call
   * counts as in flight (pause/drain) until its span is stored.
   * - `before-response`: the span is stored before the client gets the answer, and a failed write is reported to the
   *   client instead of the answer.
   * - `after-response`: the answer goes out first (answers of overlapping calls that arrive in the same event-loop turn
   *   are written together at its end) and the span is handed to the store right after it, in the same turn; failures
   *   are only logged. With a store that only this thread can reach, every other store call (the agent's reward, the
   *   rollout's end, a trainer's query) comes later, so nobody can see the answer's effects without the span. About
   *   0.1 ms less per call one at a time.
   * - `auto` (default): `after-response` for a store confined to this thread (capabilities neither `threadSafe` nor
   *   `zeroCopy`: the memory store), else `before-response` (SQLite, PostgreSQL, a remote store), where another
   *   process or thread could act on the answer first.
   */
  spanWrite?: 'auto' | 'before-response' | 'after-response';
  /** Span timestamps (default: the system clock). */
  clock?: Clock;
  /** Receives operational messages (never credentials). Default: silent. */
  log?: (line: string) => void;
  /**
   * Sample through Tinker instead of forwarding to `backend` (`--tinker`): calls are rendered with the base model's
   * chat template and sampled with `asample`; their spans carry the ids Tinker returned. The model is `model`, else
   * the `sampler` path, else `baseModel`; LLM resources whose endpoint is the Tinker base URL (their model a base
   * model or a `tinker://` path) are sampled the same way. `tokenIds` defaults to `scoped` here.
   */
  tinker?: TinkerGatewayOptions | null;
}

/** A running gateway. */
export interface Gateway {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Refuse new LLM calls with 429 (in-flight calls finish). */
  pause(options?: { retryAfterSeconds?: number; reason?: string | null }): PauseState;
  /** Accept calls again. */
  resume(): PauseState;
  /** Pause state and in-flight count. */
  state(): PauseState;
  /** Resolves when no LLM call is in flight. */
  drained(): Promise<void>;
  /** Replace the training-call overrides (model, sampling). */
  setTrainOverrides(overrides: TrainOverrides): void;
  /** Forget cached rollouts and resources (e.g. right after publishing new resources). */
  invalidateRoutes(): void;
  /** Stop listening and close every connection (in-flight calls are cut; pause and drain first to avoid that). */
  close(): Promise<void>;
}

function backendOf(options: GatewayOptions): ConfiguredBackend | null {
  const backend = options.backend ?? null;
  if (backend === null) return null;
  const config: BackendConfig = typeof backend === 'string' ? { baseUrl: backend } : backend;
  const endpoint = BackendEndpoint.parse(config.baseUrl);
  if (typeof endpoint === 'string') {
    throw new UserError(
      `Gateway backend "${config.baseUrl}" ${endpoint}; pass a base URL such as http://127.0.0.1:8000/v1.`,
    );
  }
  return { endpoint, apiKey: config.apiKey ?? options.backendApiKey ?? null };
}

function tokenMatches(expected: Buffer, req: IncomingMessage): boolean {
  const auth = req.headers.authorization;
  const candidates: string[] = [];
  if (typeof auth === 'string' && auth.toLowerCase().startsWith('bearer ')) candidates.push(auth.slice(7).trim());
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string') candidates.push(apiKey.trim());
  return candidates.some((c) => {
    const given = Buffer.from(c);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The span-write mode `auto` stands for with this store (see {@link GatewayOptions.spanWrite}). */
export function spanWriteFor(
  mode: 'auto' | 'before-response' | 'after-response',
  store: LightningStore,
): 'before-response' | 'after-response' {
  if (mode !== 'auto') return mode;
  return store.capabilities.threadSafe || store.capabilities.zeroCopy ? 'before-response' : 'after-response';
}

/**
 * Starts the AGL LLM gateway: an OpenAI- and Anthropic-compatible HTTP proxy that records every rollout call as a
 * Contract 2 span (with vLLM token ids on training calls) in the store.
 *
 * @example
 * const gateway = await startGateway({ store, backend: 'http://127.0.0.1:8000/v1', port: 0 });
 * const client = new OpenAI({ baseURL: `${gateway.url}/rollout/${rolloutId}/attempt/${attemptId}/v1`, apiKey: 'x' });
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const log = options.log ?? (() => undefined);
  if (options.tinker && options.backend)
    throw new UserError(
      'Give either a backend (--backend) or Tinker (--tinker), not both: Tinker calls need no backend.',
    );
  const clock = options.clock ?? systemClock;
  const token = options.token ? Buffer.from(options.token) : null;
  const allowedOrigins = options.allowBackends?.length ? new Set(options.allowBackends.map(allowedOrigin)) : null;
  const tinker = options.tinker ? await startGatewayTinker(options.tinker, log) : null;
  const backend = tinker ? { endpoint: tinker.endpoint, apiKey: tinker.token } : backendOf(options);
  const host = options.host ?? '127.0.0.1';
  const allowedHosts = options.allowedHosts ?? [];
  let self: BackendEndpoint | null = null;
  let trainOverrides: TrainOverrides = { ...(options.trainOverrides ?? {}) };
  const pause = new PauseController();
  const resolver = new BackendResolver({
    store: options.store,
    backend,
    allowedOrigins: allowedOrigins ?? (backend === null ? null : new Set()),
    model: options.model ?? tinker?.upstream.defaultModel ?? null,
    ...(tinker ? { tinker: tinker.route } : {}),
    llmResourceName: options.llmResourceName ?? null,
    cacheTtlMs: options.routeCacheTtlMs ?? 1000,
    nowMs: () => clock.now() * 1000,
    self: () => self,
  });
  const upstream = new UpstreamClient({
    timeoutMs: options.timeoutMs ?? 300_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
  });
  const ctx: LlmCallContext = {
    batcher: new StoreBatcher(options.store, () => pause.inflight <= 1),
    resolver,
    upstream,
    pause,
    clock,
    maxBodyBytes: options.maxBodyBytes ?? 32 * 1024 * 1024,
    tokenIds: options.tokenIds ?? (tinker ? 'scoped' : 'train'),
    anthropic: options.anthropic ?? 'auto',
    trainOverrides: () => trainOverrides,
    noAnthropic: new Set(),
    spanWrite: spanWriteFor(options.spanWrite ?? 'auto', options.store),
    log,
  };

  // Parsed paths, by pathname: a gateway sees a handful of rollout-scoped base URLs at a time (capped anyway).
  const paths = new Map<string, ReturnType<typeof parseGatewayPath>>();
  const pathOf = (pathname: string): ReturnType<typeof parseGatewayPath> => {
    let path = paths.get(pathname);
    if (path === undefined) {
      path = parseGatewayPath(pathname);
      if (paths.size >= 1024) paths.clear();
      paths.set(pathname, path);
    }
    return path;
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const pathname = query < 0 ? url : url.slice(0, query);
    if (!hostHeaderAllowed(host, req.headers.host, allowedHosts)) {
      return sendError(res, {
        status: 403,
        errorType: 'host_not_allowed',
        detail: hostRefusedDetail(req.headers.host),
      });
    }
    if (pathname === '/healthz' || pathname === '/health') return sendJson(res, 200, { status: 'ok' });
    if (token !== null && !tokenMatches(token, req)) {
      return sendError(res, {
        status: 401,
        errorType: 'unauthorized',
        detail:
          'Missing or wrong gateway key. Send "Authorization: Bearer <token>" or "x-api-key: <token>" with the gateway token (--token, AGL_GATEWAY_TOKEN or AGL_KEY).',
      });
    }
    if (pathname.startsWith('/proxy/') && !pathname.startsWith('/proxy/rollout/'))
      return handlePauseRoute(req, res, pathname, pause);
    const path = pathOf(pathname);
    if (path === null) {
      return sendError(res, {
        status: 404,
        errorType: 'not_found',
        detail: `No route ${req.method ?? ''} ${pathname}. LLM calls go to /v1/..., /rollout/{r}/attempt/{a}/v1/... or /proxy/rollout/{r}/attempt/{a}/mode/{train|val}/openai/v1/....`,
      });
    }
    if ('error' in path)
      return sendError(res, {
        status: path.status,
        errorType: path.status === 400 ? 'invalid_request' : 'not_found',
        detail: path.error,
      });
    if (path.api === 'models') {
      if (req.method !== 'GET')
        return sendError(res, { status: 405, errorType: 'method_not_allowed', detail: `Use GET for ${pathname}.` });
      return handleModels(ctx, req, res, path);
    }
    if (req.method !== 'POST')
      return sendError(res, { status: 405, errorType: 'method_not_allowed', detail: `Use POST for ${pathname}.` });
    return handleLlmCall(ctx, req, res, path);
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const sent = sendCallError(res, err);
      log(`${req.method ?? ''} ${req.url ?? ''} failed: ${sent.detail}`);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4748, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    await tinker?.close();
    throw err;
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  self = BackendEndpoint.parse(url) as BackendEndpoint;
  return {
    url,
    port,
    pause: (o) => pause.pause(o),
    resume: () => pause.resume(),
    state: () => pause.state(),
    drained: () => pause.drained(),
    setTrainOverrides: (o) => {
      trainOverrides = { ...o };
    },
    invalidateRoutes: () => resolver.invalidate(),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await upstream.close();
      await tinker?.close();
    },
  };
}
