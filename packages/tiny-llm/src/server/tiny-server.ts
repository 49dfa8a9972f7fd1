import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NotFoundError, ValidationError } from '@agl/core/errors';
import { countParams } from '../model/tiny-config';
import type { TinyWeights } from '../model/tiny-weights';
import { handleChat } from './chat-handler';
import { handleCompletion } from './completion-handler';
import { readJson, sendError, sendJson } from './http-util';
import { TinyModelHost, type ServedModel, type TinyModelHostOptions } from './tiny-model-host';
import { handleTinker } from '../tinker/tinker-routes';
import { parseTinkerPath } from '../tinker/tinker-paths';
import { TinkerService } from '../tinker/tinker-service';

/** Options of {@link startTinyServer}. */
export interface TinyServerOptions extends TinyModelHostOptions {
  /** Port; 0 picks a free one. Default 0. */
  port?: number;
  /** Bind address. Default 127.0.0.1. */
  host?: string;
  /** When set, every `/v1` route needs `Authorization: Bearer <token>` (Tinker routes: `X-API-Key: <token>` too). */
  token?: string;
  /**
   * Also serve Tinker's REST API under `/api/v1` (sessions, create_model, forward_backward, optim_step, checkpoints,
   * sampling sessions, asample, futures), so Tinker clients train and sample the embedded policy. Default false.
   */
  tinker?: boolean;
  /** Tinker futures: how long `retrieve_future` waits for a result before answering `try_again`. Default 2000 ms. */
  tinkerLongPollMs?: number;
}

/** A running tiny-llm server. */
export interface TinyServer {
  /** `http://127.0.0.1:<port>` (append `/v1` for OpenAI clients). */
  url: string;
  port: number;
  /** The served weights. */
  readonly current: ServedModel;
  /** Swaps the served weights to a saved version; in-flight requests finish on their version. */
  loadWeights(version: string): Promise<ServedModel>;
  /** Saves weights as a new version and serves it. */
  publishWeights(options: {
    version: string;
    weights: TinyWeights;
    meta?: Record<string, unknown>;
  }): Promise<ServedModel>;
  /** Saved versions, oldest first. */
  versions(): Promise<string[]>;
  /** With `tinker: true`: the Tinker base URL (`TINKER_BASE_URL`; the SDK appends `/api/v1/…`). */
  tinkerUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * Starts the OpenAI-compatible server of the embedded policy. Routes: `GET /health`, `GET /v1/models`,
 * `POST /v1/chat/completions`, `POST /v1/completions` (vLLM's `return_token_ids` and `logprobs`), `GET /v1/weights`,
 * `POST /v1/weights/load {version}`. The model runs in a worker thread; this thread only does HTTP.
 */
export async function startTinyServer(options: TinyServerOptions): Promise<TinyServer> {
  const host = await TinyModelHost.start(options);
  const tinker = options.tinker
    ? new TinkerService({ host, weightsDir: options.weightsDir, longPollMs: options.tinkerLongPollMs })
    : undefined;
  if (tinker)
    host.resolveModel = (model) => {
      parseTinkerPath(model, 'model'); // a 400 naming `model` for a malformed path
      return tinker.served(model);
    };
  const server = createServer((req, res) => {
    route(host, tinker, options.token, req, res).catch((err: unknown) => sendError(res, err));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
  } catch (err) {
    await tinker?.close();
    await host.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const shownHost = (options.host ?? '127.0.0.1') === '0.0.0.0' ? '127.0.0.1' : (options.host ?? '127.0.0.1');
  return {
    url: `http://${shownHost}:${port}`,
    port,
    get current() {
      return host.current;
    },
    loadWeights: (version) => host.loadWeights(version),
    publishWeights: (o) => host.publishWeights(o),
    versions: () => host.store.list(),
    tinkerUrl: tinker ? `http://${shownHost}:${port}` : undefined,
    close: async () => {
      await closeAll(server, host);
      await tinker?.close();
    },
  };
}

async function closeAll(server: Server, host: TinyModelHost): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await host.close();
}

async function route(
  host: TinyModelHost,
  tinker: TinkerService | undefined,
  token: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  if (path === '/health' && method === 'GET') {
    sendJson(res, 200, { status: 'ok', model: host.current.modelId, version: host.current.version });
    return;
  }
  const tinkerKey = path.startsWith('/api/v1/') && token !== undefined && req.headers['x-api-key'] === token;
  if (token !== undefined && req.headers.authorization !== `Bearer ${token}` && !tinkerKey) {
    sendJson(res, 401, {
      detail:
        'Missing or wrong bearer token; send "Authorization: Bearer <token>" (Tinker clients: "X-API-Key: <token>") with the token the server was started with.',
      error_type: 'AGL_AuthError',
      error: { message: 'Unauthorized', type: 'AGL_AuthError', code: 401 },
    });
    return;
  }
  if (tinker && path.startsWith('/api/v1/')) {
    await handleTinker(tinker, req, res, path);
    return;
  }
  const current = host.current;
  if (path === '/v1/models' && method === 'GET') {
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: current.modelId,
          object: 'model',
          created: 0,
          owned_by: 'agl',
          root: host.modelName,
          max_model_len: current.config.maxSeqLen,
          version: current.version,
          parameters: countParams(current.config),
        },
      ],
    });
  } else if (path === '/v1/chat/completions' && method === 'POST') {
    await handleChat(host, await readJson(req), res);
  } else if (path === '/v1/completions' && method === 'POST') {
    await handleCompletion(host, await readJson(req), res);
  } else if (path === '/v1/weights' && method === 'GET') {
    sendJson(res, 200, { current: current.version, model: current.modelId, versions: await host.store.list() });
  } else if (path === '/v1/weights/load' && method === 'POST') {
    const body = (await readJson(req)) as { version?: unknown };
    if (typeof body.version !== 'string') {
      throw new ValidationError(
        'version: is required, the name of a saved weights version (see GET /v1/weights).',
        [],
        { status: 400 },
      );
    }
    const served = await host.loadWeights(body.version);
    sendJson(res, 200, { version: served.version, model: served.modelId });
  } else {
    throw new NotFoundError(
      'route',
      `${method} ${path}`,
      `No route ${method} ${path}; see GET /v1/models, POST /v1/chat/completions, POST /v1/completions.`,
    );
  }
}
