import type {
  Attempt,
  AttemptedRollout,
  AttemptStatus,
  EnqueueRolloutRequest,
  JsonObject,
  JsonValue,
  NamedResourcesInput,
  ResourcesUpdate,
  Rollout,
  RolloutConfigInput,
  RolloutMode,
  RolloutStatus,
  Span,
  SpanInput,
  Worker,
  WorkerStatus,
} from '../schema/index';
import type { ReleaseStore } from './release-store';

/** How several filters combine. */
export type FilterLogic = 'and' | 'or';
/** Sort direction. */
export type SortOrder = 'asc' | 'desc';

/** One page of results. `total` counts every match before pagination; `limit = -1` means unlimited. */
export interface PaginatedResult<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

/** Pagination and sorting shared by every query. */
export interface PageOptions {
  /** Maximum items; -1 (default) = all; 0 = none (the total is still counted). */
  limit?: number;
  /** Matches to skip. */
  offset?: number;
  /** A field of the item type in camelCase (`startTime`) or snake_case (`start_time`). Unknown fields are errors. */
  sortBy?: string | null;
  /** Default `asc`. */
  sortOrder?: SortOrder;
}

/** Filters of `queryRollouts`, combined with `filterLogic`. */
export interface QueryRolloutsOptions extends PageOptions {
  statusIn?: RolloutStatus[] | null;
  rolloutIdIn?: string[] | null;
  rolloutIdContains?: string | null;
  /** AGL extension: mode within the list. */
  modeIn?: RolloutMode[] | null;
  filterLogic?: FilterLogic;
  /** @deprecated Use `statusIn` instead. */
  status?: RolloutStatus[] | null;
  /** @deprecated Use `rolloutIdIn` instead. */
  rolloutIds?: string[] | null;
}

/** Filters of `querySpans`. `rolloutId` (and `attemptId` when given) always apply; the rest combine with `filterLogic`. */
export interface QuerySpansOptions extends PageOptions {
  rolloutId: string;
  /** An attempt id, `'latest'`, or `null`/absent for every attempt. */
  attemptId?: string | null;
  traceId?: string | null;
  traceIdContains?: string | null;
  spanId?: string | null;
  spanIdContains?: string | null;
  parentId?: string | null;
  parentIdContains?: string | null;
  name?: string | null;
  nameContains?: string | null;
  filterLogic?: FilterLogic;
}

/** Filters of `queryWorkers`. */
export interface QueryWorkersOptions extends PageOptions {
  statusIn?: WorkerStatus[] | null;
  workerIdContains?: string | null;
  filterLogic?: FilterLogic;
}

/** Filters of `queryResources` (always ANDed). */
export interface QueryResourcesOptions extends PageOptions {
  resourcesId?: string | null;
  resourcesIdContains?: string | null;
}

/** Fields `updateRollout` may change; a missing key is left alone, `null` sets null where allowed. */
export interface RolloutUpdate {
  input?: JsonValue;
  mode?: RolloutMode;
  resourcesId?: string | null;
  status?: RolloutStatus;
  config?: RolloutConfigInput;
  metadata?: JsonObject | null;
}

/** Fields `updateAttempt` may change. */
export interface AttemptUpdate {
  status?: AttemptStatus;
  /**
   * With a terminal status (`succeeded`, `failed`): when the attempt ended, epoch seconds, instead of the store's clock
   * (a recorder that delivers late keeps the time it happened).
   */
  endTime?: number;
  workerId?: string;
  lastHeartbeatTime?: number;
  metadata?: JsonObject | null;
}

/** What a store can do, as AGL 0.3 reports it. */
export interface StoreCapabilities {
  threadSafe: boolean;
  asyncSafe: boolean;
  /** Shareable across processes. */
  zeroCopy: boolean;
  /** Accepts OTLP/HTTP traces. */
  otlpTraces: boolean;
  /**
   * The path of the SQLite file behind this store, when other threads on this machine may open it themselves (a
   * runner's worker threads then skip the HTTP hop); absent for every other store, `:memory:` SQLite included.
   */
  sqliteFile?: string;
}

/** One attempt of one rollout, as {@link LightningStore.querySpansOfAttempts} takes it. */
export interface AttemptRef {
  rolloutId: string;
  attemptId: string;
}

/** Counts and uptime. */
export interface StoreStatistics {
  name: string;
  totalRollouts: number;
  totalAttempts: number;
  totalSpans: number;
  totalResources: number;
  totalWorkers: number;
  /** Seconds since the store was constructed. */
  uptime: number;
  [extra: string]: string | number;
}

/**
 * `startRollout` takes an enqueue request plus the worker that runs it. A recorder that must know the ids before the
 * store answers (production recording) chooses `rolloutId` and `attemptId` itself (1 to 256 characters, no `/`, `\\`
 * or control characters, not `.` or `..`) and passes the `startTime` it observed (epoch seconds). Starting an existing
 * `rolloutId` again with the same `attemptId` returns the stored rollout (an idempotent retry); with another attempt id
 * it is a `ConflictError` (HTTP 409).
 */
export type StartRolloutRequest = EnqueueRolloutRequest & {
  workerId?: string | null;
  rolloutId?: string;
  attemptId?: string;
  startTime?: number;
  /**
   * AGL extension: store `resourcesId` exactly as given, `null` included (a production recorder names the resources
   * that served the request, none when the app's defaults served it). Default false: a missing or `null`
   * `resourcesId` means the latest resources (AGL 0.3).
   */
  keepResourcesId?: boolean;
};

/**
 * The shared store of rollouts, attempts, spans, resources and workers: the camelCase version of Agent Lightning
 * 0.3's `LightningStore`, with the same semantics (reference §2). Every backend (memory, SQLite, PostgreSQL, the HTTP
 * client) implements it and passes `describeStoreConformance`.
 *
 * Errors: an unknown id on a write throws `NotFoundError`; bad input throws `ValidationError`; an illegal status change
 * throws `InvalidTransitionError`. Lookups of unknown ids return `null`.
 */
export interface LightningStore extends Partial<ReleaseStore> {
  readonly capabilities: StoreCapabilities;

  /** Creates a rollout as `preparing` with attempt #1, skipping the queue. */
  startRollout(request: StartRolloutRequest): Promise<AttemptedRollout>;
  /** Creates a `queuing` rollout at the tail of the queue. */
  enqueueRollout(request: EnqueueRolloutRequest): Promise<Rollout>;
  /** Enqueues several rollouts in one transaction, in input order. */
  enqueueRollouts(requests: EnqueueRolloutRequest[]): Promise<Rollout[]>;
  /** Claims the oldest queued rollout, creating a new attempt; `null` when the queue is empty. Never blocks. */
  dequeueRollout(options?: { workerId?: string | null }): Promise<AttemptedRollout | null>;
  /** Claims up to `limit` (default 1) rollouts in FIFO order. */
  dequeueRollouts(options?: { limit?: number; workerId?: string | null }): Promise<AttemptedRollout[]>;
  /** Manual retry: a new attempt, ignoring `maxAttempts`. */
  startAttempt(rolloutId: string, options?: { workerId?: string | null }): Promise<AttemptedRollout>;

  queryRollouts(options?: QueryRolloutsOptions): Promise<PaginatedResult<Rollout | AttemptedRollout>>;
  getRolloutById(rolloutId: string): Promise<Rollout | AttemptedRollout | null>;
  /**
   * Attempts of a rollout, by sequence id; an unknown rollout gives an empty page. A rollout's attempts are numbered
   * 1, 2, 3, ... by `sequenceId` (no gaps, none removed), so its latest attempt's `sequenceId` is its attempt count.
   */
  queryAttempts(options: { rolloutId: string } & PageOptions): Promise<PaginatedResult<Attempt>>;
  getLatestAttempt(rolloutId: string): Promise<Attempt | null>;
  updateRollout(rolloutId: string, update: RolloutUpdate): Promise<Rollout>;
  /** `attemptId` may be `'latest'`. Status propagates to the rollout when this is the latest attempt. */
  updateAttempt(rolloutId: string, attemptId: string, update: AttemptUpdate): Promise<Attempt>;

  /** Stores a span (a heartbeat for its attempt); `null` when a span with the same id already exists. */
  addSpan(span: SpanInput): Promise<Span | null>;
  /**
   * Stores many spans in one transaction; returns those actually inserted (duplicates skipped). A returned span may
   * share its `attributes` object with the span passed in (the SQLite store writes the map as text and does not copy
   * it); what is stored never changes afterwards.
   */
  addSpans(spans: SpanInput[]): Promise<Span[]>;
  /** Next value of the per-rollout sequence counter. Does not check that the rollout exists. */
  getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number>;
  /** Bulk allocation in input order. */
  getNextSpanSequenceIds(pairs: ReadonlyArray<readonly [rolloutId: string, attemptId: string]>): Promise<number[]>;
  querySpans(options: QuerySpansOptions): Promise<PaginatedResult<Span>>;
  /**
   * Optional (an AGL extension; the memory, SQLite and PostgreSQL stores have it, `StoreClient` does not): the spans
   * named `name` of each of `attempts`, read in one store query instead of one `querySpans` per attempt. Answers one
   * list per attempt, in the order asked, each as `querySpans({ rolloutId, attemptId, name, sortBy: 'sequenceId' })`
   * lists it (ascending sequence id, ties in insertion order); an unknown rollout or attempt gets an empty list.
   * Summaries of many rollouts (the dashboard's rollout list and live traffic) read the reward spans
   * (`agentlightning.annotation`) of each rollout's latest attempt with it. Callers ask for the method, never the
   * class: `store.querySpansOfAttempts ? ... : querySpans per attempt`.
   */
  querySpansOfAttempts?(attempts: readonly AttemptRef[], options: { name: string }): Promise<Span[][]>;

  /** New `rs-` id, version 1; becomes the latest. */
  addResources(resources: NamedResourcesInput): Promise<ResourcesUpdate>;
  /** Creates or bumps the version of a caller-chosen id; becomes the latest. */
  updateResources(resourcesId: string, resources: NamedResourcesInput): Promise<ResourcesUpdate>;
  getLatestResources(): Promise<ResourcesUpdate | null>;
  getResourcesById(resourcesId: string): Promise<ResourcesUpdate | null>;
  queryResources(options?: QueryResourcesOptions): Promise<PaginatedResult<ResourcesUpdate>>;

  /** Heartbeat: upserts the worker and sets `lastHeartbeatTime`; never changes its status. */
  updateWorker(workerId: string, update?: { heartbeatStats?: JsonObject }): Promise<Worker>;
  getWorkerById(workerId: string): Promise<Worker | null>;
  queryWorkers(options?: QueryWorkersOptions): Promise<PaginatedResult<Worker>>;

  /**
   * Resolves with the rollouts (plain, no attempt) that are terminal by the deadline, in input order; unknown ids are
   * skipped. `timeoutSeconds` `null` waits forever; `≤ 0` checks once.
   */
  waitForRollouts(rolloutIds: string[], options?: { timeoutSeconds?: number | null }): Promise<Rollout[]>;
  /**
   * Optional (an AGL extension): resolves `true` as soon as rollouts may be queued (at once when the queue is not
   * empty), `false` after `timeoutMs` or when `signal` aborts. A `true` is a hint, not a claim: dequeue may still find
   * nothing. Runners use it to sleep between empty dequeues instead of polling.
   */
  waitForQueue?(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean>;
  statistics(): Promise<StoreStatistics>;
  close(): Promise<void>;
}

/** Time source in seconds since the epoch (float). Inject a fake one to test watchdogs without sleeping. */
export interface Clock {
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() / 1000 };
