import { z } from 'zod';
import {
  Attempt,
  Rollout,
  ResourcesUpdate,
  Span,
  Worker,
  parseWire,
  releaseFromWire,
  type Release,
} from '@agl/core/schema';

/** An API failure: HTTP status plus the server's `{detail, error_type}`. */
export class ApiError extends Error {
  readonly status: number;
  readonly errorType: string;
  constructor(status: number, detail: string, errorType: string) {
    super(detail);
    this.name = 'ApiError';
    this.status = status;
    this.errorType = errorType;
  }
}

/** A page of items. */
export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

const RowExtras = z.object({
  attempt_count: z.number().int(),
  final_reward: z.number().nullable(),
  feedback_count: z.number().int().default(0),
  duration: z.number().nullable(),
  worker_id: z.string().nullable(),
});

/** One line of the rollouts table: a rollout, its latest attempt, and the joined columns. */
export interface RolloutRow {
  rollout: Rollout;
  attempt: Attempt | null;
  attemptCount: number;
  finalReward: number | null;
  /** Users' feedback on the latest attempt. */
  feedbackCount: number;
  durationSeconds: number | null;
  workerId: string | null;
}

/** An attempt with its span count. */
export interface AttemptInfo extends Attempt {
  spanCount: number;
}

const FeedbackWire = z.object({
  reward: z.number(),
  comment: z.string().nullable(),
  dimensions: z.record(z.string(), z.number()),
  time: z.number().nullable(),
  sequence_id: z.number().nullable(),
  span_id: z.string().nullable(),
});
/** One user feedback on a rollout (oldest first); the latest is the rollout's final reward. */
export type Feedback = z.infer<typeof FeedbackWire>;

/** A rollout page: the row plus every attempt and the feedback history. */
export interface RolloutDetail extends RolloutRow {
  attempts: AttemptInfo[];
  feedback: Feedback[];
}

const TrafficBucketWire = z.object({
  start: z.number(),
  count: z.number(),
  failed: z.number(),
  failure_rate: z.number().nullable(),
  with_feedback: z.number(),
  feedback_count: z.number(),
  rewarded: z.number(),
  mean_reward: z.number().nullable(),
});
const TrafficWire = z.object({
  bucket: z.enum(['hour', 'day']),
  bucket_seconds: z.number(),
  since: z.number(),
  until: z.number(),
  /** `production` (sources `production` and `unscoped`) or `all`. */
  scope: z.enum(['production', 'all']).optional(),
  /** True when the window was narrowed to the span of the data. */
  fitted: z.boolean().optional(),
  buckets: z.array(TrafficBucketWire),
  total: TrafficBucketWire,
  sources: z.array(z.string()),
  agents: z.array(z.string()),
});
/** What `GET /v1/agl/ext/traffic` returns. */
export type Traffic = z.infer<typeof TrafficWire>;

/** Filters of the live traffic view, shared by the traffic chart and its rollout list. */
export interface TrafficFilters {
  /** `production`: sources `production` and `unscoped` only (the view's default); `all`: every rollout. */
  scope?: 'production' | 'all' | null;
  source?: string | null;
  agent?: string | null;
  feedback?: 'with' | 'without' | null;
  minReward?: number | null;
  maxReward?: number | null;
  /** Epoch seconds. */
  since?: number | null;
  until?: number | null;
  mode?: string | null;
}

function trafficParams(f: TrafficFilters): Record<string, string | number | null | undefined> {
  return {
    scope: f.scope,
    source: f.source,
    agent: f.agent,
    feedback: f.feedback,
    min_reward: f.minReward,
    max_reward: f.maxReward,
    since: f.since,
    until: f.until,
  };
}

const Stats = z.object({
  count: z.number(),
  mean: z.number().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  success_rate: z.number().nullable(),
});
/** Reward statistics of a group of rollouts. */
export type RewardStats = z.infer<typeof Stats>;

const RewardSeriesWire = z.object({
  points: z.array(
    z.object({
      rollout_id: z.string(),
      mode: z.string().nullable(),
      resources_id: z.string().nullable(),
      status: z.string(),
      start_time: z.number(),
      end_time: z.number().nullable(),
      reward: z.number().nullable(),
    }),
  ),
  total_points: z.number(),
  truncated: z.boolean(),
  success_threshold: z.number(),
  by_resources: z.array(
    z.object({
      resources_id: z.string().nullable(),
      index: z.number(),
      version: z.number().nullable(),
      create_time: z.number().nullable(),
      update_time: z.number().nullable(),
      modes: z.record(z.string(), Stats),
    }),
  ),
  overall: z.record(z.string(), Stats.extend({ succeeded: z.number(), finished: z.number() })),
});
/** What `GET /v1/agl/ext/rewards` returns. */
export type RewardSeries = z.infer<typeof RewardSeriesWire>;

/** One resources version with the rewards it earned (API keys masked by the server). */
export interface ResourceVersion extends ResourcesUpdate {
  isLatest: boolean;
  rewards: Record<string, RewardStats>;
}

const ResourceExtras = z.object({ is_latest: z.boolean(), rewards: z.record(z.string(), Stats) });
const Statistics = z.looseObject({
  total_rollouts: z.number(),
  total_attempts: z.number(),
  total_spans: z.number(),
  total_resources: z.number(),
  total_workers: z.number(),
});
/** Store counters. */
export type StoreStatistics = z.infer<typeof Statistics>;

/** Query of the rollouts table. */
export interface RolloutTableQuery {
  limit: number;
  offset: number;
  sortBy: string;
  sortOrder: 'asc' | 'desc';
  status?: string | null;
  mode?: string | null;
  rolloutIdContains?: string | null;
  workerIdContains?: string | null;
  resourcesId?: string | null;
  /** Live-traffic filters (source, agent, feedback, reward range, time window). */
  traffic?: TrafficFilters;
}

function pageOf(value: unknown): Page<unknown> {
  return z
    .object({ items: z.array(z.unknown()), total: z.number(), limit: z.number(), offset: z.number() })
    .parse(value);
}

function rowOf(value: unknown): RolloutRow {
  const raw = value as Record<string, unknown>;
  const rollout = parseWire(Rollout, 'rollout', raw, 'rollout');
  const attempt = raw.attempt ? parseWire(Attempt, 'attempt', raw.attempt, 'attempt') : null;
  const extras = RowExtras.parse(raw);
  return {
    rollout,
    attempt,
    attemptCount: extras.attempt_count,
    finalReward: extras.final_reward,
    feedbackCount: extras.feedback_count,
    durationSeconds: extras.duration,
    workerId: extras.worker_id,
  };
}

/** Options of {@link ApiClient}. */
export interface ApiClientOptions {
  /** Server origin, e.g. `http://127.0.0.1:4747`; `''` = the page's own origin. */
  baseUrl?: string;
  /** Bearer token of the store server, or `null`. */
  token?: string | null;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/**
 * Typed client of the store API the dashboard reads: AGL's `/v1/agl/*` routes and the `/v1/agl/ext/*` extension
 * routes. Every answer is checked against the zod schemas of `@agl/core/schema` (through the wire codec).
 */
export class ApiClient {
  readonly #baseUrl: string;
  readonly #token: string | null;
  readonly #fetch: typeof fetch;

  constructor(options: ApiClientOptions = {}) {
    this.#baseUrl = (options.baseUrl ?? '').replace(/\/$/, '');
    this.#token = options.token ?? null;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** The token this client sends. */
  get token(): string | null {
    return this.#token;
  }

  async #get(
    path: string,
    params: Record<string, string | number | null | undefined> = {},
    post?: { body: unknown },
  ): Promise<unknown> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== '') query.append(key, String(value));
    }
    const qs = query.toString();
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    let res: Response;
    try {
      if (post) headers['content-type'] = 'application/json';
      res = await this.#fetch(
        `${this.#baseUrl}${path}${qs ? `?${qs}` : ''}`,
        post ? { method: 'POST', headers, body: JSON.stringify(post.body) } : { headers },
      );
    } catch (error) {
      throw new ApiError(0, `Cannot reach the store server: ${(error as Error).message}`, 'NetworkError');
    }
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === '' ? null : (JSON.parse(text) as unknown);
    } catch {
      throw new ApiError(res.status, `The server answered ${res.status} with a non-JSON body.`, 'BadResponse');
    }
    if (!res.ok) {
      const err = (body ?? {}) as { detail?: unknown; error_type?: unknown };
      throw new ApiError(
        res.status,
        typeof err.detail === 'string' ? err.detail : `HTTP ${res.status}`,
        typeof err.error_type === 'string' ? err.error_type : 'HttpError',
      );
    }
    return body;
  }

  /** Every release, newest first (`GET /v1/agl/releases`). */
  async releases(): Promise<Release[]> {
    const body = (await this.#get('/v1/agl/releases')) as { items: unknown[] };
    return body.items.map(releaseFromWire);
  }

  /** Promotes or aborts a running release (`POST /v1/agl/releases/{id}/promote|abort`), with the token. */
  async endRelease(releaseId: string, action: 'promote' | 'abort', reason?: string): Promise<Release> {
    const body = reason === undefined ? {} : { reason };
    return releaseFromWire(
      await this.#get(`/v1/agl/releases/${encodeURIComponent(releaseId)}/${action}`, {}, { body }),
    );
  }

  /** What the server serves, e.g. its SQLite file (`GET /v1/agl/ext/info`); `null` when it does not say. */
  async storeLabel(): Promise<string | null> {
    const body = (await this.#get('/v1/agl/ext/info')) as { store?: unknown };
    return typeof body.store === 'string' ? body.store : null;
  }

  /** Store counters (`GET /v1/agl/statistics`). */
  async statistics(): Promise<StoreStatistics> {
    return Statistics.parse(await this.#get('/v1/agl/statistics'));
  }

  /** A page of the rollouts table, sorted and filtered on the server. */
  async rollouts(q: RolloutTableQuery): Promise<Page<RolloutRow>> {
    const page = pageOf(
      await this.#get('/v1/agl/ext/rollouts', {
        limit: q.limit,
        offset: q.offset,
        sort_by: q.sortBy,
        sort_order: q.sortOrder,
        status_in: q.status,
        mode_in: q.mode,
        rollout_id_contains: q.rolloutIdContains,
        worker_id_contains: q.workerIdContains,
        resources_id: q.resourcesId,
        ...trafficParams(q.traffic ?? {}),
      }),
    );
    return { ...page, items: page.items.map(rowOf) };
  }

  /** One rollout with its attempts, or `null`. */
  async rollout(rolloutId: string): Promise<RolloutDetail | null> {
    const raw = await this.#get(`/v1/agl/ext/rollouts/${encodeURIComponent(rolloutId)}`);
    if (raw === null) return null;
    const attempts = z.array(z.looseObject({ span_count: z.number() })).parse((raw as { attempts: unknown }).attempts);
    const feedback = z
      .array(FeedbackWire)
      .default([])
      .parse((raw as { feedback?: unknown }).feedback);
    return {
      ...rowOf(raw),
      attempts: attempts.map((a) => ({ ...parseWire(Attempt, 'attempt', a, 'attempt'), spanCount: a.span_count })),
      feedback,
    };
  }

  /** Recorded rollouts per hour or day: count, failures, feedback and mean final reward (`GET /ext/traffic`). */
  async traffic(bucket: 'hour' | 'day', filters: TrafficFilters = {}): Promise<Traffic> {
    return TrafficWire.parse(
      await this.#get('/v1/agl/ext/traffic', { bucket, mode: filters.mode, ...trafficParams(filters) }),
    );
  }

  /** One page of the spans of one attempt, by sequence id. */
  async spans(rolloutId: string, attemptId: string, options: { limit: number; offset: number }): Promise<Page<Span>> {
    const page = pageOf(
      await this.#get('/v1/agl/spans', {
        rollout_id: rolloutId,
        attempt_id: attemptId,
        limit: options.limit,
        offset: options.offset,
        sort_by: 'sequence_id',
        sort_order: 'asc',
      }),
    );
    return { ...page, items: page.items.map((s) => parseWire(Span, 'span', s, 'span')) };
  }

  /** Reward points and per-version statistics. */
  async rewards(options: { successThreshold?: number } = {}): Promise<RewardSeries> {
    return RewardSeriesWire.parse(
      await this.#get('/v1/agl/ext/rewards', { success_threshold: options.successThreshold }),
    );
  }

  /** Every resources version, oldest first, with reward statistics. */
  async resources(options: { successThreshold?: number } = {}): Promise<ResourceVersion[]> {
    const raw = await this.#get('/v1/agl/ext/resources', { success_threshold: options.successThreshold });
    const page = z.object({ items: z.array(z.unknown()), total: z.number() }).parse(raw);
    return page.items.map((item) => {
      const extras = ResourceExtras.parse(item);
      return {
        ...parseWire(ResourcesUpdate, 'resourcesUpdate', item, 'resources'),
        isLatest: extras.is_latest,
        rewards: extras.rewards,
      };
    });
  }

  /** Runner workers. */
  async workers(): Promise<Page<Worker>> {
    const page = pageOf(await this.#get('/v1/agl/workers', { sort_by: 'worker_id', limit: 500 }));
    return { ...page, items: page.items.map((w) => parseWire(Worker, 'worker', w, 'worker')) };
  }
}
