import { ConnectionError, HttpError, StoreClosedError } from '@agl/core/errors';
import {
  Attempt,
  AttemptedRollout,
  ResourcesUpdate,
  Rollout,
  Span,
  Worker,
  camelToSnake,
  fromWire,
  parseWire,
  snakeToCamel,
  toWire,
  type EnqueueRolloutRequest,
  type NamedResourcesInput,
  type Release,
  type SpanInput,
} from '@agl/core/schema';
import {
  type ApplyRecordsResult,
  type AttemptUpdate,
  type FeedbackOptions,
  type LightningStore,
  type PageOptions,
  type PaginatedResult,
  type ProductionRecord,
  type QueryResourcesOptions,
  type QueryRolloutsOptions,
  type QuerySpansOptions,
  type QueryWorkersOptions,
  type RolloutUpdate,
  type ServingResources,
  type StartReleaseRequest,
  type StartRolloutRequest,
  type StoreCapabilities,
  type StoreStatistics,
} from '@agl/core/store';
import { fastParseSpan } from '@agl/core/schema';
import { HttpTransport, type TransportOptions } from './http-transport';
import { ReleaseRoutes } from './release-routes';
import { rolloutSpansPath, type RolloutSpansOptions } from './rollout-spans-query';

export type { RolloutSpansOptions } from './rollout-spans-query';
import { REVEAL_SECRETS_HEADER } from './reveal-secrets-header';

/** Options of {@link StoreClient}: the transport's plus the long-poll chunk and warnings. */
export interface StoreClientOptions extends TransportOptions {
  /** Longest single `POST /waits/rollouts` request, in seconds; default 30 (the server caps it too). */
  waitChunkSeconds?: number;
  /** Monotonic time in seconds for long-poll deadlines; default `performance.now() / 1000`. */
  monotonicNow?: () => number;
  /** Receives warnings (a failed dequeue); default `process.emitWarning`. */
  onWarning?: (message: string) => void;
}

const P = '/v1/agl';
const enc = encodeURIComponent;
type Json = Record<string, unknown>;

function readRollout(value: unknown): Rollout | AttemptedRollout {
  const attempted = typeof value === 'object' && value !== null && (value as Json).attempt != null;
  return attempted
    ? parseWire(AttemptedRollout, 'rollout', value, 'rollout')
    : parseWire(Rollout, 'rollout', value, 'rollout');
}
const readAttempted = (value: unknown): AttemptedRollout => parseWire(AttemptedRollout, 'rollout', value, 'rollout');
const readAttempt = (value: unknown): Attempt => parseWire(Attempt, 'attempt', value, 'attempt');
const readWorker = (value: unknown): Worker => parseWire(Worker, 'worker', value, 'worker');
const readResources = (value: unknown): ResourcesUpdate =>
  parseWire(ResourcesUpdate, 'resourcesUpdate', value, 'resources');
// Spans come back by the thousand (addSpans echoes, querySpans): the zod-equivalent fast path first, zod for errors.
const readSpan = (value: unknown): Span =>
  fastParseSpan(fromWire('span', value)) ?? parseWire(Span, 'span', value, 'span');
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * Most spans {@link StoreClient.addSpans} sends in one request: well under the store server's defaults (10,000 spans,
 * 150,000 JSON values per request) for spans of up to ~100 attributes.
 */
const SPANS_PER_REQUEST = 1000;

/**
 * Sent with every resources call: the server masks API keys unless asked (`x-agl-reveal-secrets: 1`, with the token
 * when the server has one), and a runner needs its LLM's key in clear. An AGL 0.3 server ignores the header.
 */
const REVEAL: Record<string, string> = { [REVEAL_SECRETS_HEADER]: '1' };

function readPage<T>(value: unknown, read: (item: unknown) => T, askedLimit: number | undefined): PaginatedResult<T> {
  const page = (value ?? {}) as Json;
  const items = list(page.items).map(read);
  if (askedLimit === 0) return { items: [], total: Number(page.total), limit: 0, offset: Number(page.offset ?? 0) };
  return { items, total: Number(page.total), limit: Number(page.limit), offset: Number(page.offset) };
}

/** Wire page fields. AGL's server rejects `limit: 0`, so a zero limit asks for one item and drops it (same total). */
function pageBody(options: PageOptions): Json {
  const body: Json = { limit: options.limit === 0 ? 1 : (options.limit ?? -1), offset: options.offset ?? 0 };
  if (options.sortBy !== undefined && options.sortBy !== null) {
    body.sort_by = camelToSnake(options.sortBy);
    body.sort_order = options.sortOrder ?? 'asc';
  } else if (options.sortOrder !== undefined) {
    body.sort_order = options.sortOrder;
  }
  return body;
}

function setIfPresent(body: Json, key: string, value: unknown): void {
  if (value !== undefined && value !== null) body[key] = value;
}

/** Copies the query filters of `options` named by `keys` that are set (not null) into `body`, in wire spelling. */
function setFilters<T extends object>(body: Json, options: T, keys: ReadonlyArray<keyof T & string>): void {
  for (const key of keys) setIfPresent(body, camelToSnake(key), options[key]);
}

/**
 * A {@link LightningStore} over HTTP: talks to `agl store serve` (or Python Agent Lightning 0.3's store server) with
 * the AGL 0.3 REST protocol. Keep-alive connections; retries network errors, 408 and 5xx with backoff and health
 * probes; never retries other 4xx, and never retries a dequeue.
 */
export class StoreClient implements LightningStore {
  readonly capabilities: StoreCapabilities = { threadSafe: true, asyncSafe: true, zeroCopy: true, otlpTraces: true };
  readonly #http: HttpTransport;
  readonly #waitChunk: number;
  readonly #now: () => number;
  readonly #warn: (message: string) => void;
  #dequeueWarned = false;
  #closed = false;
  #spanBatch = true;
  #sequenceBatch = true;
  #queueWaits = true;
  #queueWait: Promise<boolean> | null = null;
  readonly #closing = new AbortController();
  readonly #reopen: StoreClientOptions;
  readonly #releases = new ReleaseRoutes({
    get: (path, headers) => this.#get(path, headers),
    post: (path, body) => this.#post(path, body),
    missingRoute: isMissingRoute,
  });

  constructor(options: StoreClientOptions) {
    this.#http = new HttpTransport(options);
    const { url, fallbackUrls, token, requestTimeoutMs, connectTimeoutMs } = options;
    this.#reopen = {
      url,
      fallbackUrls,
      token,
      requestTimeoutMs,
      connectTimeoutMs,
      retryDelays: [],
      healthRetryDelays: [],
    };
    this.#waitChunk = options.waitChunkSeconds ?? 30;
    this.#now = options.monotonicNow ?? (() => performance.now() / 1000);
    this.#warn = options.onWarning ?? ((message) => process.emitWarning(message, { code: 'AGL_STORE_CLIENT' }));
  }

  /** The server's base URL. */
  get url(): string {
    return this.#http.baseUrl;
  }

  /**
   * How the AGL tracer's exporter thread opens this store again when the process exits (`STORE_REOPEN` of
   * `@agl/core/tracer`, the key spelled out here so the client does not load the tracer): same servers and token, one
   * try each.
   */
  [Symbol.for('agl.store.reopen')](): { module: string; exportName: string; options: StoreClientOptions } {
    // The exporter thread runs no TypeScript loader: from the workspace sources (`@agl/source`), use the built client.
    const module = import.meta.resolve('@agl/client').replace(/\/src\/index\.ts$/, '/dist/index.js');
    return { module, exportName: 'StoreClient', options: this.#reopen };
  }

  /** `{url}/v1/traces`, for OTLP exporters. */
  otlpTracesEndpoint(): string {
    return `${this.#http.baseUrl}/v1/traces`;
  }

  #open(): void {
    if (this.#closed) throw new StoreClosedError('StoreClient');
  }

  async #get(path: string, headers?: Record<string, string>): Promise<unknown> {
    this.#open();
    return (await this.#http.call({ method: 'GET', path, headers })).body ?? null;
  }

  /** `retry: false` tries the request once (see {@link HttpTransport.call}). */
  async #post(
    path: string,
    body?: unknown,
    options: {
      headers?: Record<string, string>;
      retry?: boolean;
      json?: string;
      signal?: AbortSignal;
    } = {},
  ): Promise<unknown> {
    this.#open();
    return (await this.#http.call({ method: 'POST', path, body, ...options })).body ?? null;
  }

  async startRollout(request: StartRolloutRequest): Promise<AttemptedRollout> {
    const { workerId, rolloutId, attemptId, startTime, ...rest } = request;
    const body: Json = { ...(toWire('enqueueRequest', rest) as Json), worker_id: workerId ?? null };
    if (rolloutId !== undefined) body.rollout_id = rolloutId;
    if (attemptId !== undefined) body.attempt_id = attemptId;
    if (startTime !== undefined) body.start_time = startTime;
    return readAttempted(await this.#post(`${P}/rollouts`, body));
  }

  async enqueueRollout(request: EnqueueRolloutRequest): Promise<Rollout> {
    const [rollout] = await this.enqueueRollouts([request]);
    return rollout!;
  }

  async enqueueRollouts(requests: EnqueueRolloutRequest[]): Promise<Rollout[]> {
    this.#open();
    if (requests.length === 0) return [];
    const body = { rollouts: requests.map((r) => toWire('enqueueRequest', r)) };
    return list(await this.#post(`${P}/queues/rollouts/enqueue`, body)).map((r) =>
      parseWire(Rollout, 'rollout', r, 'rollout'),
    );
  }

  async dequeueRollout(options: { workerId?: string | null } = {}): Promise<AttemptedRollout | null> {
    return (await this.dequeueRollouts({ limit: 1, workerId: options.workerId ?? null }))[0] ?? null;
  }

  async dequeueRollouts(options: { limit?: number; workerId?: string | null } = {}): Promise<AttemptedRollout[]> {
    const limit = options.limit ?? 1;
    this.#open();
    if (limit <= 0) return [];
    const body: Json = { limit };
    setIfPresent(body, 'worker_id', options.workerId);
    let answer: unknown;
    try {
      answer = await this.#post(`${P}/queues/rollouts/dequeue`, body, { retry: false });
    } catch (error) {
      const transient =
        ConnectionError.isInstance(error) ||
        (HttpError.isInstance(error) && (error.status >= 500 || error.status === 408));
      if (!transient) throw error;
      if (!this.#dequeueWarned) {
        this.#dequeueWarned = true;
        this.#warn(
          `Dequeue from ${this.url} failed and is not retried (a claim may be lost; the watchdog recovers it): ${(error as Error).message}`,
        );
      }
      return [];
    }
    return list(answer).map(readAttempted);
  }

  async startAttempt(rolloutId: string, options: { workerId?: string | null } = {}): Promise<AttemptedRollout> {
    const body = options.workerId ? { worker_id: options.workerId } : undefined;
    return readAttempted(await this.#post(`${P}/rollouts/${enc(rolloutId)}/attempts`, body));
  }

  async queryRollouts(options: QueryRolloutsOptions = {}): Promise<PaginatedResult<Rollout | AttemptedRollout>> {
    const body: Json = { ...pageBody(options), filter_logic: options.filterLogic ?? 'and' };
    setFilters(body, options, ['statusIn', 'rolloutIdIn', 'rolloutIdContains', 'modeIn', 'status', 'rolloutIds']);
    return readPage(await this.#post(`${P}/rollouts/search`, body), readRollout, options.limit);
  }

  async getRolloutById(rolloutId: string): Promise<Rollout | AttemptedRollout | null> {
    const value = await this.#get(`${P}/rollouts/${enc(rolloutId)}`);
    return value === null ? null : readRollout(value);
  }

  async queryAttempts(options: { rolloutId: string } & PageOptions): Promise<PaginatedResult<Attempt>> {
    const path = `${P}/rollouts/${enc(options.rolloutId)}/attempts/search`;
    return readPage(await this.#post(path, pageBody(options)), readAttempt, options.limit);
  }

  async getLatestAttempt(rolloutId: string): Promise<Attempt | null> {
    const value = await this.#get(`${P}/rollouts/${enc(rolloutId)}/attempts/latest`);
    return value === null ? null : readAttempt(value);
  }

  async updateRollout(rolloutId: string, update: RolloutUpdate): Promise<Rollout> {
    const body = updateBody(update);
    if (update.config !== undefined) body.config = toWire('rolloutConfig', update.config);
    return parseWire(Rollout, 'rollout', await this.#post(`${P}/rollouts/${enc(rolloutId)}`, body), 'rollout');
  }

  async updateAttempt(rolloutId: string, attemptId: string, update: AttemptUpdate): Promise<Attempt> {
    const path = `${P}/rollouts/${enc(rolloutId)}/attempts/${enc(attemptId)}`;
    return readAttempt(await this.#post(path, updateBody(update)));
  }

  async addSpan(span: SpanInput): Promise<Span | null> {
    const value = await this.#post(`${P}/spans`, toWire('span', span));
    return value === null ? null : readSpan(value);
  }

  /**
   * Stores spans in batches of at most {@link SPANS_PER_REQUEST} per request, so a large call stays under the server's
   * per-request limits (spans, JSON values). Batches are sent in order; a failing one rejects the call, and the batches
   * before it stay stored.
   */
  async addSpans(spans: SpanInput[]): Promise<Span[]> {
    this.#open();
    if (spans.length <= SPANS_PER_REQUEST) return this.#addSpanBatch(spans);
    const stored: Span[] = [];
    for (let start = 0; start < spans.length; start += SPANS_PER_REQUEST) {
      stored.push(...(await this.#addSpanBatch(spans.slice(start, start + SPANS_PER_REQUEST))));
    }
    return stored;
  }

  async #addSpanBatch(spans: SpanInput[]): Promise<Span[]> {
    if (spans.length === 0) return [];
    if (this.#spanBatch) {
      try {
        // `echo: false`: the server answers with the indexes it stored, not the spans (half the bytes of a batch).
        const answer = (await this.#post(`${P}/spans/batch`, { spans: toWire('span', spans), echo: false })) as
          Json | unknown[];
        if (Array.isArray(answer)) return answer.map(readSpan); // a server that ignores `echo`
        // The stored spans are the inputs the server kept: validated here directly (one copy), not through the wire
        // spelling and back (three).
        return list(answer.inserted).map((i) => {
          const span = spans[Number(i)]!;
          return fastParseSpan(span) ?? readSpan(toWire('span', span));
        });
      } catch (error) {
        if (!isMissingRoute(error)) throw error;
        this.#spanBatch = false; // an AGL 0.3 server: fall back to one request per span, like its own client
      }
    }
    const stored: Span[] = [];
    for (const span of spans) {
      const result = await this.addSpan(span);
      if (result !== null) stored.push(result);
    }
    return stored;
  }

  async getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    const value = (await this.#post(`${P}/spans/next`, { rollout_id: rolloutId, attempt_id: attemptId })) as Json;
    return Number(value.sequence_id);
  }

  async getNextSpanSequenceIds(
    pairs: ReadonlyArray<readonly [rolloutId: string, attemptId: string]>,
  ): Promise<number[]> {
    this.#open();
    if (pairs.length === 0) return [];
    if (this.#sequenceBatch) {
      try {
        const value = (await this.#post(`${P}/spans/next/batch`, { pairs })) as Json;
        return list(value.sequence_ids).map(Number);
      } catch (error) {
        if (!isMissingRoute(error)) throw error;
        this.#sequenceBatch = false;
      }
    }
    const ids: number[] = [];
    for (const [rolloutId, attemptId] of pairs) ids.push(await this.getNextSpanSequenceId(rolloutId, attemptId));
    return ids;
  }

  async querySpans(options: QuerySpansOptions): Promise<PaginatedResult<Span>> {
    const body: Json = {
      ...pageBody({ sortBy: 'sequence_id', ...options }),
      rollout_id: options.rolloutId,
      filter_logic: options.filterLogic ?? 'and',
    };
    setFilters(body, options, [
      'attemptId',
      'traceId',
      'traceIdContains',
      'spanId',
      'spanIdContains',
      'parentId',
      'parentIdContains',
      'name',
      'nameContains',
    ]);
    return readPage(await this.#post(`${P}/spans/search`, body), readSpan, options.limit);
  }

  /**
   * The spans of one rollout in sequence order (`GET /v1/agl/rollouts/{id}/spans`): of every attempt, or of one
   * (`attemptId`; `'latest'` is the rollout's latest attempt). Unlike {@link querySpans}, which answers an empty page,
   * an unknown rollout throws `NotFoundError` naming it.
   */
  async getRolloutSpans(rolloutId: string, options: RolloutSpansOptions = {}): Promise<PaginatedResult<Span>> {
    return readPage(await this.#get(rolloutSpansPath(P, rolloutId, options)), readSpan, options.limit);
  }

  async addResources(resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return readResources(await this.#post(`${P}/resources`, namedResourcesToWire(resources), { headers: REVEAL }));
  }

  async updateResources(resourcesId: string, resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return readResources(
      await this.#post(`${P}/resources/${enc(resourcesId)}`, namedResourcesToWire(resources), { headers: REVEAL }),
    );
  }

  async getLatestResources(): Promise<ResourcesUpdate | null> {
    const value = await this.#get(`${P}/resources/latest`, REVEAL);
    return value === null ? null : readResources(value);
  }

  async getResourcesById(resourcesId: string): Promise<ResourcesUpdate | null> {
    const value = await this.#get(`${P}/resources/${enc(resourcesId)}`, REVEAL);
    return value === null ? null : readResources(value);
  }

  async queryResources(options: QueryResourcesOptions = {}): Promise<PaginatedResult<ResourcesUpdate>> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(pageBody(options))) query.set(key, String(value));
    if (options.resourcesId != null) query.set('resources_id', options.resourcesId);
    if (options.resourcesIdContains != null) query.set('resources_id_contains', options.resourcesIdContains);
    return readPage(await this.#get(`${P}/resources?${query.toString()}`, REVEAL), readResources, options.limit);
  }

  async updateWorker(workerId: string, update: { heartbeatStats?: Json } = {}): Promise<Worker> {
    const body = update.heartbeatStats === undefined ? undefined : { heartbeat_stats: update.heartbeatStats };
    return readWorker(await this.#post(`${P}/workers/${enc(workerId)}`, body));
  }

  async getWorkerById(workerId: string): Promise<Worker | null> {
    const value = await this.#get(`${P}/workers/${enc(workerId)}`);
    return value === null ? null : readWorker(value);
  }

  async queryWorkers(options: QueryWorkersOptions = {}): Promise<PaginatedResult<Worker>> {
    const body: Json = { ...pageBody(options), filter_logic: options.filterLogic ?? 'and' };
    setFilters(body, options, ['statusIn', 'workerIdContains']);
    return readPage(await this.#post(`${P}/workers/search`, body), readWorker, options.limit);
  }

  /**
   * Long-polls `POST /waits/rollouts` in chunks of at most `waitChunkSeconds` until every requested rollout that exists
   * is terminal or the timeout passes (`null` waits forever; `≤ 0` checks once).
   */
  /**
   * Long-polls `POST /waits/queue` (an AGL extension of `agl store serve`); concurrent callers share one request.
   * Throws `HttpError` 404 against a server without the route (Python AGL's), after which callers poll dequeue.
   */
  async waitForQueue(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> {
    this.#open();
    if (!this.#queueWaits)
      throw new HttpError(404, `${this.url} has no queue long poll (POST ${P}/waits/queue); poll dequeue instead.`);
    if (options.signal?.aborted) return false;
    let shared = this.#queueWait;
    if (!shared) {
      const seconds = Math.max(0, Math.min(options.timeoutMs / 1000, this.#waitChunk));
      shared = this.#http
        .call({
          method: 'POST',
          path: `${P}/waits/queue`,
          body: { timeout: seconds },
          timeoutMs: seconds * 1000 + 30_000,
          signal: this.#closing.signal,
        })
        .then((response) => (response.body as Json | null)?.queued === true)
        .catch((error: unknown) => {
          if (this.#closing.signal.aborted) return false;
          if (isMissingRoute(error)) this.#queueWaits = false;
          throw error;
        })
        .finally(() => {
          if (this.#queueWait === shared) this.#queueWait = null;
        });
      this.#queueWait = shared;
    }
    const signal = options.signal;
    if (!signal) return shared;
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  async waitForRollouts(rolloutIds: string[], options: { timeoutSeconds?: number | null } = {}): Promise<Rollout[]> {
    this.#open();
    const timeout = options.timeoutSeconds ?? null;
    const deadline = timeout === null ? Number.POSITIVE_INFINITY : this.#now() + Math.max(timeout, 0);
    for (;;) {
      const remaining = deadline - this.#now();
      const chunk = timeout !== null && timeout <= 0 ? timeout : Math.max(0, Math.min(this.#waitChunk, remaining));
      const started = this.#now();
      const response = await this.#http.call({
        method: 'POST',
        path: `${P}/waits/rollouts`,
        body: { rollout_ids: rolloutIds, timeout: chunk },
        timeoutMs: chunk * 1000 + 30_000,
      });
      const done = list(response.body).map((r) => parseWire(Rollout, 'rollout', r, 'rollout'));
      if (done.length >= new Set(rolloutIds).size || this.#now() >= deadline || chunk <= 0) return done;
      if (response.headers['x-agl-server-closing'] !== undefined) return done; // the server is shutting down
      const pendingHeader = response.headers['x-agl-wait-pending'];
      if (pendingHeader !== undefined) {
        if (Number(pendingHeader) === 0) return done;
      } else if (this.#now() - started < chunk * 0.9) {
        return done; // a server without the header answered early: nothing left to wait for
      }
    }
  }

  /**
   * Sends a production recorder's records (`applyRecords` on the server, `POST /v1/agl/records`) in one request.
   * Idempotent, so a batch whose answer was lost may be sent again. `retry: false` tries once (the recorder keeps its
   * own queue and backoff).
   */
  async applyRecords(
    records: readonly ProductionRecord[],
    options: { retry?: boolean } = {},
  ): Promise<ApplyRecordsResult> {
    return this.applyEncodedRecords(
      records.map((record) => JSON.stringify(toWire('productionRecord', record))),
      options,
    );
  }

  /**
   * {@link applyRecords} for records already encoded as wire JSON, each `JSON.stringify(toWire('productionRecord',
   * record))`: the production recorder keeps its buffer in that form and sends it without encoding again. `signal`
   * aborts the request (the recorder's exit deadline).
   */
  async applyEncodedRecords(
    records: readonly string[],
    options: { retry?: boolean; signal?: AbortSignal } = {},
  ): Promise<ApplyRecordsResult> {
    const answer = (await this.#post(`${P}/records`, undefined, {
      json: `{"records":[${records.join(',')}]}`,
      retry: options.retry,
      ...(options.signal ? { signal: options.signal } : {}),
    })) as { applied?: unknown; rejected?: unknown } | null;
    const rejected = Array.isArray(answer?.rejected) ? (answer.rejected as Array<Record<string, unknown>>) : [];
    return {
      applied: typeof answer?.applied === 'number' ? answer.applied : 0,
      rejected: rejected.map((r) => ({
        index: Number(r.index),
        kind: String(r.kind),
        errorType: String(r.error_type),
        detail: String(r.detail),
      })),
    };
  }

  /** Records a user's late feedback on a rollout (`POST /v1/agl/rollouts/{id}/feedback`); see `recordFeedback`. */
  async addFeedback(rolloutId: string, reward: number | boolean, options: FeedbackOptions = {}): Promise<Span> {
    const body: Json = { reward };
    if (options.comment !== undefined) body.comment = options.comment;
    if (options.dimensions !== undefined) body.dimensions = options.dimensions;
    const answer = (await this.#post(`${P}/rollouts/${enc(rolloutId)}/feedback`, body)) as { span?: unknown } | null;
    return readSpan(answer?.span);
  }

  // ---------------------------------------------------------------- releases (DESIGN.md Contract 4c)

  /** Starts a release (`POST /v1/agl/releases`); see `ReleaseStore.startRelease`. */
  startRelease(request: StartReleaseRequest): Promise<Release> {
    return this.#releases.start(request);
  }
  /** One release (`GET /v1/agl/releases/{id}`), or null when unknown. */
  getRelease(releaseId: string): Promise<Release | null> {
    return this.#releases.get(releaseId);
  }
  /** Every release, newest first (`GET /v1/agl/releases`). */
  listReleases(): Promise<Release[]> {
    return this.#releases.list();
  }
  /** Promotes a running release by hand: its candidate becomes the latest. */
  promoteRelease(releaseId: string, options: { reason?: string } = {}): Promise<Release> {
    return this.#releases.end(releaseId, 'promote', options);
  }
  /** Aborts a running release by hand: every request gets the baseline again. */
  abortRelease(releaseId: string, options: { reason?: string } = {}): Promise<Release> {
    return this.#releases.end(releaseId, 'abort', options);
  }
  /** Runs the release's sequential test now (the server also runs it after each batch of results). */
  evaluateRelease(releaseId: string): Promise<Release> {
    return this.#releases.evaluate(releaseId);
  }
  /** The latest resources and the running release's arms in one read; a server without releases: the latest alone. */
  getServingResources(): Promise<ServingResources> {
    return this.#releases.serving(() => this.getLatestResources());
  }

  async statistics(): Promise<StoreStatistics> {
    const value = (await this.#get(`${P}/statistics`)) as Json;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [snakeToCamel(k), v]),
    ) as unknown as StoreStatistics;
  }

  /** Closes the keep-alive connections. The server and its store stay up. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    await this.#http.close();
  }
}

/**
 * An update's set fields in wire spelling. Keys the API does not know go too, so the server can name them in its 422.
 */
function updateBody(update: object): Json {
  return Object.fromEntries(
    Object.entries(update)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [camelToSnake(k), v]),
  );
}

function namedResourcesToWire(resources: NamedResourcesInput): Json {
  return Object.fromEntries(Object.entries(resources).map(([name, resource]) => [name, toWire('resource', resource)]));
}

function isMissingRoute(error: unknown): boolean {
  return (
    HttpError.isInstance(error) &&
    (error.status === 404 || error.status === 405) &&
    error.errorType !== 'AGL_NotFoundError'
  );
}
