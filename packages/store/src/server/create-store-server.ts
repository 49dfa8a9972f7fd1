import { createHash, timingSafeEqual } from 'node:crypto';
import fastifyCors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { UserError } from '@agl/core/errors';
import { systemClock, type Clock, type LightningStore } from '@agl/core/store';
import { HTTP_ERROR_TYPES, toErrorReply } from './http-errors';
import { isLoopbackHost } from '@agl/core/net';
import { API_PREFIX, sendJson, type RouteContext } from './route-context';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_CONTROL_BODY_LIMIT,
  DEFAULT_MAX_ATTRIBUTES_PER_SPAN,
  DEFAULT_MAX_JSON_VALUES,
  DEFAULT_MAX_SPANS_PER_REQUEST,
  registerRequestLimits,
  routeBodyLimit,
  type RequestLimits,
} from './request-limits';
import { corsOptions, registerHostCheck, registerPathIdCheck } from './request-guards';
import { registerEventRoutes } from './routes/event-routes';
import { registerExtRoutes } from './routes/ext-routes';
import { isStaticAppRequest, registerStaticRoutes } from './routes/ext-static-routes';
import { registerMiscRoutes } from './routes/misc-routes';
import { registerProductionRoutes } from './routes/production-routes';
import { registerReleaseRoutes } from './routes/release-routes';
import { ReleaseTrigger } from '../releases/release-trigger';
import { otlpRoutesPlugin } from './routes/otlp-routes';
import { registerResourceWorkerRoutes } from './routes/resource-worker-routes';
import { registerRolloutRoutes } from './routes/rollout-routes';
import { registerRolloutSpansRoute } from './routes/rollout-spans-route';
import { registerSpanRoutes } from './routes/span-routes';
import { RolloutSummaries } from './routes/ext-rollout-summaries';
import { watchSpanWrites } from './span-write-watch';
import { countStoreWrites } from './store-write-counter';
import { enforceWriteBounds } from './write-bounds';
import { registerMetricsRoute } from './metrics';
import { registerRequestLog, type RequestLogOption } from './request-log';
import { createRedactor, type RedactPattern } from '@agl/core/redact';

/** Default store server port (AGL 0.3's). */
export const DEFAULT_STORE_PORT = 4747;
/** Default cap of one long-poll `POST /waits/rollouts`, in seconds. */
export const DEFAULT_MAX_WAIT_SECONDS = 30;

/** Options of {@link createStoreServer}. */
export interface StoreServerOptions {
  /** The store to serve (memory, SQLite, ...). */
  store: LightningStore;
  /** Interface to bind; default `127.0.0.1`. Binding wider without a token logs a warning. */
  host?: string;
  /** Port; default 4747; `0` picks a free port. */
  port?: number;
  /** When set, every route except `/v1/agl/health` requires `Authorization: Bearer <token>`. */
  token?: string | null;
  /**
   * Largest body of the ingest routes (spans, span batches, events, OTLP, rollout start and enqueue) in bytes, also the
   * largest inflated OTLP body; default 16 MiB.
   */
  bodyLimit?: number;
  /** Largest body of every other route (searches, updates, control) in bytes; default 1 MiB. */
  controlBodyLimit?: number;
  /** Largest number of JSON values (array items, object members) in one body, counted before parsing; default 150,000. */
  maxJsonValues?: number;
  /** Largest number of spans in one request (span batch, OTLP export); default 10,000. */
  maxSpansPerRequest?: number;
  /** Largest number of attributes of one span; default 1,000. */
  maxAttributesPerSpan?: number;
  /**
   * More `Host` names a loopback-bound server answers (besides `localhost`, `127.x.x.x` and `[::1]`), e.g. the name a
   * reverse proxy forwards. Ignored when bound wider than loopback. Default none.
   */
  allowedHosts?: readonly string[];
  /** Longest time to receive a request and compute its answer, in ms (long polls excluded); default 60 000. */
  requestTimeoutMs?: number;
  /** Longest server-side wait of one `POST /waits/rollouts`, in seconds; default 30. Clients loop. */
  maxWaitSeconds?: number;
  /**
   * Allowed CORS origins. `*` allows any origin but `null`, without credentials; a list allows those origins, with
   * credentials; `null` is refused. CORS is off when absent.
   */
  corsOrigin?: string | string[] | null;
  /** Time source of the event route; default the wall clock. */
  clock?: Clock;
  /** Close the store too when the server closes; default false. */
  closeStore?: boolean;
  /** Fastify logger option; default off. */
  logger?: FastifyServerOptions['logger'];
  /**
   * A directory of static files (the built dashboard) served publicly at `/`, with `index.html` as the fallback for
   * client-side routes; the API under `/v1` stays token-protected. Off when absent.
   */
  staticDir?: string | null;
  /** What the server serves, for people (the SQLite file, the PostgreSQL URL); `GET /v1/agl/ext/info` answers it. */
  storeLabel?: string | null;
  /** Receives warnings (wide bind without token); default `process.emitWarning`. */
  onWarning?: (message: string) => void;
  /** Serve Prometheus metrics at `GET /metrics` (behind the token when one is set); default true. */
  metrics?: boolean;
  /** One structured JSON log line per request: `true` = stderr, or a function receiving each line; default off. */
  requestLog?: RequestLogOption;
  /**
   * Mask secrets in spans that arrive over OTLP (`POST /v1/traces`, e.g. from Python exporters, which do not redact)
   * before they are stored: the built-in detectors, `patterns`, and `AGL_REDACT_PATTERNS`. Default off (AGL's own
   * clients redact before sending). `agl store serve --redact-otlp`.
   */
  redactOtlp?: boolean | { patterns?: readonly RedactPattern[] };
}

/** A running store server. */
export interface StoreServer {
  /** Base URL, e.g. `http://127.0.0.1:4747` (a wildcard bind is advertised as 127.0.0.1). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The fastify instance (for tests and for mounting more routes before `listen`). */
  readonly app: FastifyInstance;
  /** `{url}/v1/traces`. */
  otlpTracesEndpoint(): string;
  /** Stops accepting requests, answers long polls at once, waits for in-flight requests, then closes. */
  close(): Promise<void>;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function advertisedHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function validateOptions(options: StoreServerOptions): void {
  const port = options.port ?? DEFAULT_STORE_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UserError(`Invalid port ${port}: use an integer from 0 to 65535 (0 picks a free port).`);
  }
  for (const [name, fallback] of [
    ['bodyLimit', DEFAULT_BODY_LIMIT],
    ['controlBodyLimit', DEFAULT_CONTROL_BODY_LIMIT],
    ['maxJsonValues', DEFAULT_MAX_JSON_VALUES],
    ['maxSpansPerRequest', DEFAULT_MAX_SPANS_PER_REQUEST],
    ['maxAttributesPerSpan', DEFAULT_MAX_ATTRIBUTES_PER_SPAN],
  ] as const) {
    const limit = options[name] ?? fallback;
    if (!Number.isInteger(limit) || limit <= 0)
      throw new UserError(`Invalid ${name} ${limit}: use a positive integer.`);
  }
  if (options.token === '') throw new UserError('The token is empty: pass a non-empty --token, or none at all.');
}

/**
 * Starts the AGL store server: Agent Lightning 0.3's REST protocol under `/v1/agl`, OTLP/HTTP traces at
 * `/v1/traces`, and AGL 1.0's event route, on fastify. Resolves once it listens.
 *
 * @example
 * const server = await createStoreServer({ store: new SqliteStore({ path: 'agl.sqlite' }), port: 0 });
 * console.log(server.url); // http://127.0.0.1:53121
 */
export async function createStoreServer(options: StoreServerOptions): Promise<StoreServer> {
  validateOptions(options);
  const host = options.host ?? '127.0.0.1';
  const limits: RequestLimits = {
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    controlBodyLimit: options.controlBodyLimit ?? DEFAULT_CONTROL_BODY_LIMIT,
    maxJsonValues: options.maxJsonValues ?? DEFAULT_MAX_JSON_VALUES,
    maxSpansPerRequest: options.maxSpansPerRequest ?? DEFAULT_MAX_SPANS_PER_REQUEST,
    maxAttributesPerSpan: options.maxAttributesPerSpan ?? DEFAULT_MAX_ATTRIBUTES_PER_SPAN,
  };
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  const token = options.token ?? null;
  const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, { code: 'AGL_STORE_SERVER' }));
  if (token === null && !isLoopbackHost(host)) {
    warn(
      `The store server binds ${host} without a token: anyone who can reach this machine can read and change the store. ` +
        'Pass --token (or set AGL_STORE_TOKEN), or bind 127.0.0.1.',
    );
  }

  let isClosing = false;
  let markClosing: () => void = () => undefined;
  const closing = new Promise<void>((resolve) => {
    markClosing = () => {
      isClosing = true;
      resolve();
    };
  });
  // Every span written through the server drops that rollout's cached summary, so late feedback shows at once.
  let summaries: RolloutSummaries | null = null;
  // Every write through the server bumps the counter the traffic view's answer cache keys on.
  const counted = countStoreWrites(
    watchSpanWrites(enforceWriteBounds(options.store), (ids) => ids.forEach((id) => summaries?.invalidate(id))),
  );
  const store = counted.store;
  const clock = options.clock ?? systemClock;
  summaries = new RolloutSummaries({ store, clock });
  const ctx: RouteContext = {
    store,
    summaries,
    writes: counted.writes,
    clock,
    maxWaitSeconds: options.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS,
    closing,
    limits,
    storeLabel: options.storeLabel ?? null,
    releases: new ReleaseTrigger(store),
  };

  // Built before anything starts: a bad pattern is a ValidationError here, not a half-started server.
  const redactOtlp = options.redactOtlp;
  const otlpRedactor = redactOtlp
    ? createRedactor({
        env: process.env,
        ...(typeof redactOtlp === 'object' && redactOtlp.patterns ? { patterns: redactOtlp.patterns } : {}),
      })
    : null;
  const cors = options.corsOrigin === undefined || options.corsOrigin === null ? null : corsOptions(options.corsOrigin);
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: Math.max(limits.bodyLimit, limits.controlBodyLimit),
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Errors fastify raises before routing (a malformed percent-encoding in the path) get the same JSON body.
    frameworkErrors: (error, request, reply) => {
      const mapped = toErrorReply(error, { bodyLimit: routeBodyLimit(request, limits) });
      const detail =
        error.code === 'FST_ERR_BAD_URL'
          ? `${mapped.body.detail}: percent-encode ids in the URL path (encodeURIComponent).`
          : mapped.body.detail;
      return sendJson(reply, mapped.status, { ...mapped.body, detail });
    },
  });

  registerHostCheck(app, host, options.allowedHosts ?? []);
  registerRequestLimits(app, limits);

  if (cors !== null) await app.register(fastifyCors, cors);

  if (token !== null) {
    const expected = digest(`Bearer ${token}`);
    app.addHook('onRequest', async (request, reply) => {
      if (request.method === 'OPTIONS' || request.url.split('?')[0] === `${API_PREFIX}/health`) return;
      // Public only when the static catch-all matched: the raw URL can disguise an API route (`/%76%31/agl/...`).
      if (options.staticDir && request.routeOptions.url === '/*' && isStaticAppRequest(request.method, request.url))
        return;
      const header = request.headers.authorization?.trim() || undefined;
      if (header === undefined || !timingSafeEqual(digest(header), expected)) {
        return sendJson(reply.header('www-authenticate', 'Bearer'), 401, {
          detail:
            header === undefined
              ? "Missing Authorization header: send 'Authorization: Bearer <token>' with the store's token (--token / AGL_STORE_TOKEN; OTLP senders: OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<token>)."
              : 'Invalid bearer token in the Authorization header: send the token the server was started with (--token / AGL_STORE_TOKEN).',
          error_type: HTTP_ERROR_TYPES.auth,
        });
      }
    });
  }

  registerPathIdCheck(app);
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith(`${API_PREFIX}/waits/`)) return;
    const timer = setTimeout(() => {
      if (!reply.sent) {
        sendJson(reply, 503, {
          detail: `The request took longer than the server's limit of ${requestTimeoutMs} ms; retry, or send smaller batches.`,
          error_type: HTTP_ERROR_TYPES.timeout,
        });
      }
    }, requestTimeoutMs);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
  });

  // While draining, answers close their keep-alive connection so `close()` does not wait for idle clients.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (isClosing) reply.header('connection', 'close');
    return payload;
  });

  app.setErrorHandler((error, request, reply) => {
    const mapped = toErrorReply(error, { bodyLimit: routeBodyLimit(request, limits) });
    if (mapped.status >= 500) request.log.error({ err: error }, 'store server fault');
    return sendJson(reply, mapped.status, mapped.body);
  });
  app.setNotFoundHandler((request, reply) =>
    sendJson(reply, 404, {
      detail: `Not Found: ${request.method} ${request.url.split('?')[0]} is not a route of the AGL store server (see the route table in @agl/store's README).`,
      error_type: HTTP_ERROR_TYPES.routeNotFound,
    }),
  );

  if (options.metrics !== false) registerMetricsRoute(app, { store: options.store, now: () => ctx.clock.now() });
  registerRequestLog(app, options.requestLog ?? false);
  registerMiscRoutes(app, ctx);
  registerRolloutRoutes(app, ctx);
  registerSpanRoutes(app, ctx);
  registerRolloutSpansRoute(app, ctx);
  registerResourceWorkerRoutes(app, ctx);
  registerEventRoutes(app, ctx);
  registerProductionRoutes(app, ctx);
  registerReleaseRoutes(app, ctx);
  registerExtRoutes(app, ctx);
  if (options.staticDir) registerStaticRoutes(app, options.staticDir);
  await app.register(otlpRoutesPlugin(ctx, { redactor: otlpRedactor }));

  await app.listen({ host, port: options.port ?? DEFAULT_STORE_PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? DEFAULT_STORE_PORT);
  const url = `http://${advertisedHost(host)}:${port}`;
  let closed: Promise<void> | null = null;

  return {
    url,
    host,
    port,
    app,
    otlpTracesEndpoint: () => `${url}/v1/traces`,
    close() {
      closed ??= (async () => {
        markClosing();
        await app.close();
        if (options.closeStore) await options.store.close();
      })();
      return closed;
    },
  };
}
