import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '@agl/core';
import {
  PROTOBUF_CONTENT_TYPE,
  decodeForwardBackwardRequest,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
  type ForwardBackwardOutput,
  type SampleResponse,
} from '@agl/tinker';
import { WireRefusal } from './tinker-training-ops';
import { consumeRefusedSeq, standInRoutes } from './tinker-stand-in-routes';
import {
  STAND_IN_BASE_MODELS,
  type PendingAnswer,
  type StandInBaseModel,
  type StandInCheckpoint,
  type StandInModel,
  type StandInSample,
  type StandInState,
  type WireBody,
} from './tinker-stand-in-types';
import { checkSchema, TINKER_REQUEST_SCHEMAS } from './tinker-wire-schemas';

export {
  STAND_IN_BASE_MODELS,
  type PendingAnswer,
  type StandInBaseModel,
  type StandInCheckpoint,
  type StandInModel,
  type StandInSample,
};

/** Options of {@link startTinkerStandIn}. */
export interface TinkerStandInOptions {
  /**
   * `tinker` (default): hosted Tinker as SDK 0.25 expects it (protobuf and JSON, `try_again` futures,
   * `{"error","category"}` failures, `<session>:train:<n>` ids). `json`: a SkyRL-like server that speaks only JSON
   * (HTTP 408 while pending, `future_id`, HTTP 400 failures, `model_<hex>` ids, 415 for protobuf bodies).
   */
  mode?: 'tinker' | 'json';
  /** The key required in `X-API-Key`; absent: any. */
  apiKey?: string;
  /** How each future answers its first polls before its result. Default `['try_again', '408']` (json: `['408']`). */
  pending?: PendingAnswer[];
  /** Answer `complete_metadata` once for protobuf results polled with `allow_metadata_only: true`. Default true. */
  metadataFirst?: boolean;
  /** Base models served. Default {@link STAND_IN_BASE_MODELS}. */
  baseModels?: Record<string, StandInBaseModel>;
  /** Seed of the sampler's random numbers. Default 1. */
  seed?: number;
  /** Flags added to (or replacing) the `/api/v1/client/config` answer, e.g. `{ fwdbwd_max_chunk_len: 2 }`. */
  clientConfig?: Record<string, unknown>;
}

/** One recorded request. */
export interface RecordedTinkerRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  contentType: string;
  /** The JSON body, or the decoded protobuf ForwardBackwardRequest. */
  body: unknown;
  /** The answer's status. */
  status: number;
}

/** A running stand-in. */
export interface TinkerStandIn {
  /** `http://127.0.0.1:<port>`: the base URL (TINKER_BASE_URL). */
  url: string;
  mode: 'tinker' | 'json';
  readonly requests: RecordedTinkerRequest[];
  readonly sessions: Map<string, { heartbeats: number; tags: string[] }>;
  readonly models: Map<string, StandInModel>;
  readonly checkpoints: Map<string, StandInCheckpoint>;
  /** Every `asample` answered, in order: sampler path (or base model), prompt ids, and the sequences returned. */
  readonly sampled: StandInSample[];
  /**
   * Requests to `path` (e.g. `/api/v1/optim_step`) are answered `status` with `{"detail"}` the next `times` times,
   * after letting `after` more through first (default 0).
   */
  failNext(path: string, status: number, times?: number, detail?: string, after?: number): void;
  /** The next future submitted to `path` fails while it runs with `detail` (`{"error","category"}`; json: HTTP 400). */
  failNextFuture(path: string, detail: string): void;
  /** The recorded requests to one route. */
  requestsTo(path: string): RecordedTinkerRequest[];
  close(): Promise<void>;
}

/**
 * Starts a Tinker stand-in on 127.0.0.1 (port 0) that follows SDK 0.25.0's wire field by field: every request body is
 * checked against the SDK's request models (unknown or mistyped fields → 422 `detail`), training requests run in
 * `seq_id` order per model, futures answer `try_again` / 408 first, and a bigram model computes real logprobs, losses,
 * gradients and Adam steps and samples from the trained table.
 */
export async function startTinkerStandIn(options: TinkerStandInOptions = {}): Promise<TinkerStandIn> {
  const mode = options.mode ?? 'tinker';
  const json = mode === 'json';
  const pendingScript = options.pending ?? (json ? ['408'] : ['try_again', '408']);
  const baseModels = options.baseModels ?? STAND_IN_BASE_MODELS;
  const requests: RecordedTinkerRequest[] = [];
  const faults = new Map<string, { status: number; times: number; detail: string; after: number }>();
  const s: StandInState = {
    json,
    pendingScript,
    baseModels,
    random: seededRandom(options.seed ?? 1),
    sessions: new Map(),
    models: new Map(),
    checkpoints: new Map(),
    samplers: new Map(),
    futures: new Map(),
    sampled: [],
    futureFaults: new Map(),
    currentPath: '',
    futureCounter: 0,
    clientConfig: options.clientConfig ?? {},
  };
  const routes = standInRoutes(s);
  function answerFuture(b: WireBody, accept: string, res: ServerResponse): number {
    const future = s.futures.get(b.request_id);
    if (!future) return send(res, 404, { detail: 'Future not found' });
    const pending = future.pending.shift() ?? (future.done ? undefined : '408');
    if (pending === 'try_again')
      return send(res, 200, { type: 'try_again', request_id: b.request_id, queue_state: 'active' });
    if (pending === '408')
      return send(
        res,
        408,
        json ? { detail: 'Timeout waiting for result' } : { detail: 'Request still pending', queue_state: 'active' },
      );
    if (future.error !== undefined) {
      return json
        ? send(res, 400, { detail: future.error })
        : send(res, 200, { error: future.error, category: 'user' });
    }
    const proto = !json && future.kind !== 'json' && accept.includes(PROTOBUF_CONTENT_TYPE);
    const bytes = proto
      ? future.kind === 'sample'
        ? encodeSampleResponse(future.result as SampleResponse)
        : encodeForwardBackwardOutput(future.result as ForwardBackwardOutput)
      : undefined;
    if (proto && b.allow_metadata_only === true && (options.metadataFirst ?? true) && !future.metadataSent) {
      future.metadataSent = true;
      return send(res, 200, { status: 'complete_metadata', response_payload_size: bytes!.byteLength });
    }
    if (bytes) {
      res.writeHead(200, { 'content-type': PROTOBUF_CONTENT_TYPE, 'content-length': bytes.byteLength });
      res.end(bytes);
      return 200;
    }
    return send(res, 200, future.result);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, record: RecordedTinkerRequest): Promise<number> {
    const path = record.path;
    const fault = faults.get(path);
    if (fault && fault.after > 0) fault.after--;
    else if (fault && fault.times > 0) {
      fault.times--;
      return send(res, fault.status, { detail: fault.detail });
    }
    if (options.apiKey !== undefined && req.headers['x-api-key'] !== options.apiKey) {
      return send(res, 401, { detail: 'Invalid API key: send the key from the Tinker console in X-API-Key' });
    }
    if (req.method === 'GET') {
      if (path === '/api/v1/healthz') return send(res, 200, { status: 'ok' });
      if (path === '/api/v1/get_server_capabilities') {
        return send(res, 200, { supported_models: Object.keys(baseModels).map((model_name) => ({ model_name })) });
      }
      return send(res, 404, { detail: 'Not Found' });
    }
    const raw = Buffer.concat(await collect(req));
    let body: WireBody;
    if (record.contentType.includes(PROTOBUF_CONTENT_TYPE)) {
      if (json || path !== '/api/v1/forward_backward') {
        return send(res, 415, {
          detail: `Content-Type ${PROTOBUF_CONTENT_TYPE} is not supported here; send application/json`,
        });
      }
      if (req.headers['content-encoding'])
        return send(res, 415, { detail: `Content-Encoding ${req.headers['content-encoding']} is not supported` });
      let decoded;
      try {
        decoded = decodeForwardBackwardRequest(raw);
      } catch (error) {
        return send(res, 422, { detail: `Invalid proto forward_backward body: ${(error as Error).message}` });
      }
      record.body = decoded;
      const { data, loss_fn, loss_fn_config, ...rest } = decoded;
      body = { ...rest, forward_backward_input: { data, loss_fn, loss_fn_config } };
    } else {
      try {
        body = JSON.parse(raw.toString('utf8') || '{}') as WireBody;
      } catch {
        return send(res, 422, { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
      }
      record.body = body;
      const schema = TINKER_REQUEST_SCHEMAS[path];
      if (schema) {
        const issues = checkSchema(body, schema);
        if (issues.length > 0) return send(res, 422, { detail: issues });
      }
    }
    if (path === '/api/v1/retrieve_future') return answerFuture(body, String(req.headers.accept ?? ''), res);
    const route = routes[path];
    if (!route) return send(res, 404, { detail: 'Not Found' });
    s.currentPath = path;
    try {
      return send(res, 200, route(body));
    } catch (error) {
      if (!(error instanceof WireRefusal)) throw error;
      if (error.status !== 409) consumeRefusedSeq(s, body);
      return send(res, error.status, { detail: error.detail });
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const record: RecordedTinkerRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      headers,
      contentType: String(req.headers['content-type'] ?? ''),
      body: undefined,
      status: 0,
    };
    requests.push(record);
    handle(req, res, record).then(
      (status) => (record.status = status),
      (error: unknown) => (record.status = send(res, 500, { detail: `stand-in fault: ${(error as Error).message}` })),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    mode,
    requests,
    sessions: s.sessions,
    models: s.models,
    checkpoints: s.checkpoints,
    sampled: s.sampled,
    failNext(path, status, times = 1, detail = `injected HTTP ${status}`, after = 0) {
      faults.set(path, { status, times, detail, after });
    },
    failNextFuture(path, detail) {
      s.futureFaults.set(path, detail);
    },
    requestsTo: (path) => requests.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function collect(req: IncomingMessage): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks;
}

function send(res: ServerResponse, status: number, body: unknown): number {
  const text = JSON.stringify(body ?? null);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  return status;
}
