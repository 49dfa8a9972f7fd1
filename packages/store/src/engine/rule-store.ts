import { Span as SpanSchema } from '@agl/core/schema';
import type {
  Attempt,
  AttemptedRollout,
  EnqueueRolloutRequest,
  JsonObject,
  NamedResourcesInput,
  Release,
  ResourcesUpdate,
  Rollout,
  Span,
  SpanInput,
  Worker,
} from '@agl/core/schema';
import type {
  ApplyRecordsResult,
  AttemptRef,
  AttemptUpdate,
  LightningStore,
  PageOptions,
  PaginatedResult,
  QueryResourcesOptions,
  QueryRolloutsOptions,
  QuerySpansOptions,
  QueryWorkersOptions,
  RolloutUpdate,
  ServingResources,
  StartReleaseRequest,
  StartRolloutRequest,
  StoreCapabilities,
  StoreStatistics,
} from '@agl/core/store';
import { fastParseSpan } from '@agl/core/schema';
import {
  AttemptUpdateInput,
  DequeueInput,
  EnqueueRolloutInput,
  IdSchema,
  RolloutUpdateInput,
  SequencePairsInput,
  StartRolloutInput,
  WaitInput,
  WorkerOption,
  WorkerUpdateInput,
  parseApi,
  parseNamedResources,
} from './input';
import {
  getRollout,
  latestResources,
  queryAttempts,
  queryResources,
  queryRollouts,
  querySpans,
  querySpansOfAttempts,
  queryWorkers,
} from './queries';
import type { SerializedSpans } from './storage';
import { readTraffic } from './traffic-refresh';
import type { TrafficRows, TrafficRowsQuery } from './traffic-rows';
import { decideRelease } from '../releases/release-decision';
import { collectReleaseData } from '../releases/release-evaluator';
import {
  applyVerdictRule,
  endReleaseRule,
  getReleaseRule,
  listReleasesRule,
  releaseNotFound,
  servingResourcesRule,
  startReleaseRule,
} from '../releases/release-rules';
import { call, type Rule } from './storage-ops';
import { applyRecordsBatch } from './records-rule';
import { coalesceWrites } from './coalesced-writes';
import { ingestSpansRule, type IngestSpan, type IngestSpansResult } from './ingest-spans-rule';
import {
  addResourcesRule,
  addSpansRule,
  dequeueRolloutsRule,
  enqueueRolloutsRule,
  nextSequenceIdsRule,
  startAttemptRule,
  startRolloutRule,
  updateAttemptRule,
  updateResourcesRule,
  updateRolloutRule,
  updateWorkerRule,
  type Plan,
  type PreparedSpans,
} from './store-rules';

/** Whether a call runs the debounced watchdog first (AGL's `healthcheck_before`). */
export type Watch = 'watched' | 'unwatched';

/** Serialises checked spans for storages that keep JSON text (`StoreStorage.serializeSpans`). */
export type SpanSerializer = (spans: readonly Span[], attributesJson?: ReadonlyArray<string | null>) => SerializedSpans;

/**
 * Checks spans for `addSpansRule` and, with a serializer, serialises them. Touches no storage, so callers run it before
 * the write transaction (the write lock is then held only for the inserts). The attribute maps are checked, not copied
 * (a tenth of an insert): a storage either serialises them or, keeping objects, stores its own deep copy.
 */
export function prepareSpans(
  spans: unknown,
  serialize: SpanSerializer | undefined,
  attributesJson?: ReadonlyArray<string | null>,
): PreparedSpans {
  if (!Array.isArray(spans)) parseApi(SpanSchema.array(), spans, 'spans');
  const list = spans as unknown[];
  const parsed = list.map(
    (s, i) =>
      fastParseSpan(s, { shareAttributes: true }) ?? parseApi(SpanSchema, s, list.length === 1 ? 'span' : `span #${i}`),
  );
  return { spans: parsed, serialized: parsed.length > 0 && serialize ? serialize(parsed, attributesJson) : null };
}

/**
 * The {@link LightningStore} methods, written once over the store rules: input validation, then one rule per call.
 * A backend says how a rule runs: {@link RuleStore.write} (one transaction), {@link RuleStore.read} (a consistent
 * view), both after the closed-state check and, for AGL's "W" methods, the debounced watchdog. `EngineStore` runs them
 * on the synchronous storages (memory, SQLite), `PostgresStore` on PostgreSQL.
 */
export abstract class RuleStore implements LightningStore {
  abstract readonly capabilities: StoreCapabilities;

  /** Runs the plan `make` returns in one write transaction; `make` runs once the store is open (and watched). */
  protected abstract write<T>(watch: Watch, make: () => Plan<T>): Promise<T>;
  /**
   * {@link RuleStore.write} for a plan with many writes (a recorder's batch): a backend whose turn shares a transaction
   * (a savepoint per call, which makes every write dearer) runs it alone. Default: {@link RuleStore.write}.
   */
  protected writeAlone<T>(watch: Watch, make: () => Plan<T>): Promise<T> {
    return this.write(watch, make);
  }
  /** Runs the rule `make` returns with a consistent read view. */
  protected abstract read<T>(watch: Watch, make: () => Rule<T>): Promise<T>;
  /** The span serializer of a storage that keeps JSON text. */
  protected abstract get spanSerializer(): SpanSerializer | undefined;

  abstract waitForRollouts(rolloutIds: string[], options?: { timeoutSeconds?: number | null }): Promise<Rollout[]>;
  abstract statistics(): Promise<StoreStatistics>;
  abstract close(): Promise<void>;

  async startRollout(request: StartRolloutRequest): Promise<AttemptedRollout> {
    return this.write('watched', () => {
      const req = parseApi(StartRolloutInput, request, 'startRollout request');
      return (t) => startRolloutRule(t, req);
    });
  }

  async enqueueRollout(request: EnqueueRolloutRequest): Promise<Rollout> {
    const [rollout] = await this.enqueueRollouts([request]);
    return rollout!;
  }

  async enqueueRollouts(requests: EnqueueRolloutRequest[]): Promise<Rollout[]> {
    return this.write('watched', () => {
      if (!Array.isArray(requests)) parseApi(EnqueueRolloutInput.array(), requests, 'enqueueRollouts requests');
      const reqs = requests.map((r, i) => parseApi(EnqueueRolloutInput, r, `enqueueRollouts request #${i}`));
      return (t) => enqueueRolloutsRule(t, reqs);
    });
  }

  async dequeueRollout(options?: { workerId?: string | null }): Promise<AttemptedRollout | null> {
    const [claimed] = await this.dequeueRollouts({ ...(options ?? {}), limit: 1 });
    return claimed ?? null;
  }

  async dequeueRollouts(options?: { limit?: number; workerId?: string | null }): Promise<AttemptedRollout[]> {
    return this.write('watched', () => {
      const o = parseApi(DequeueInput, options ?? {}, 'dequeueRollouts options');
      return (t) => dequeueRolloutsRule(t, o);
    });
  }

  async startAttempt(rolloutId: string, options?: { workerId?: string | null }): Promise<AttemptedRollout> {
    return this.write('watched', () => {
      const id = parseApi(IdSchema, rolloutId, 'rolloutId');
      const o = parseApi(WorkerOption, options ?? {}, 'startAttempt options');
      return (t) => startAttemptRule(t, id, o.workerId ?? null);
    });
  }

  async queryRollouts(options?: QueryRolloutsOptions): Promise<PaginatedResult<Rollout | AttemptedRollout>> {
    return this.read('watched', () => queryRollouts(options));
  }

  async getRolloutById(rolloutId: string): Promise<Rollout | AttemptedRollout | null> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    return this.read('watched', () => getRollout(id));
  }

  async queryAttempts(options: { rolloutId: string } & PageOptions): Promise<PaginatedResult<Attempt>> {
    return this.read('watched', () => queryAttempts(options));
  }

  async getLatestAttempt(rolloutId: string): Promise<Attempt | null> {
    const id = parseApi(IdSchema, rolloutId, 'rolloutId');
    return this.read('watched', () => call('getLatestAttempt', id));
  }

  async updateRollout(rolloutId: string, update: RolloutUpdate): Promise<Rollout> {
    return this.write('watched', () => {
      const id = parseApi(IdSchema, rolloutId, 'rolloutId');
      const u = parseApi(RolloutUpdateInput, update ?? {}, 'updateRollout fields');
      return (t) => updateRolloutRule(t, id, u);
    });
  }

  async updateAttempt(rolloutId: string, attemptId: string, update: AttemptUpdate): Promise<Attempt> {
    return this.write('watched', () => {
      const rid = parseApi(IdSchema, rolloutId, 'rolloutId');
      const aid = parseApi(IdSchema, attemptId, 'attemptId');
      const u = parseApi(AttemptUpdateInput, update ?? {}, 'updateAttempt fields');
      return (t) => updateAttemptRule(t, rid, aid, u);
    });
  }

  // The single-item methods call the shared internals, not the public batch methods, so a subclass that wraps
  // `addSpans` (a counting or watching store) sees one call per caller call.
  async addSpan(span: SpanInput): Promise<Span | null> {
    const [inserted] = await this.addSpansPrepared([span]);
    return inserted ?? null;
  }

  async addSpans(spans: SpanInput[]): Promise<Span[]> {
    return this.addSpansPrepared(spans);
  }

  /** Checks (and serialises) the spans when the call starts, outside the write transaction, which only inserts them. */
  protected async addSpansPrepared(spans: unknown, attributesJson?: ReadonlyArray<string | null>): Promise<Span[]> {
    return this.write('unwatched', () => {
      const prepared = prepareSpans(spans, this.spanSerializer, attributesJson);
      return (t) => addSpansRule(t, prepared);
    });
  }

  /**
   * `applyRecords` (a production recorder's batch, `POST /v1/agl/records`) in one write transaction, with the same
   * answer: see {@link applyRecordsBatch}.
   */
  async applyProductionRecords(records: readonly unknown[]): Promise<ApplyRecordsResult> {
    return applyRecordsBatch(this, records, this.spanSerializer, (plan) => this.writeAlone('watched', () => plan));
  }

  /**
   * Spans of any owners (OTLP ingest) in one write transaction: spans of an unknown rollout or attempt are left out
   * (by index), sequence ids issued for those without one, the rest added as `addSpans` does. See
   * {@link ingestSpansRule}.
   */
  async ingestSpans(items: readonly IngestSpan[]): Promise<IngestSpansResult> {
    return this.writeAlone('unwatched', () => (t) => coalesceWrites(ingestSpansRule(t, items, this.spanSerializer)));
  }

  async getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    const [next] = await this.#nextSequenceIds([[rolloutId, attemptId]]);
    return next!;
  }

  async getNextSpanSequenceIds(pairs: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    return this.#nextSequenceIds(pairs);
  }

  #nextSequenceIds(pairs: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    return this.write('unwatched', () => {
      const list = parseApi(SequencePairsInput, pairs, 'span sequence id requests');
      return () => nextSequenceIdsRule(list);
    });
  }

  async querySpans(options: QuerySpansOptions): Promise<PaginatedResult<Span>> {
    return this.read('watched', () => querySpans(options));
  }

  async querySpansOfAttempts(attempts: readonly AttemptRef[], options: { name: string }): Promise<Span[][]> {
    return this.read('watched', () => querySpansOfAttempts(attempts, options));
  }

  /**
   * The live-traffic counts and annotation spans of a window (see `traffic-rows.ts`), or null when this backend cannot
   * aggregate them itself. Used by the store server's `GET /v1/agl/ext/traffic`.
   */
  async queryTraffic(query: TrafficRowsQuery): Promise<TrafficRows | null> {
    return readTraffic(
      query,
      (rule) => this.read('unwatched', rule),
      (rule) => this.write('unwatched', () => rule),
    );
  }

  async addResources(resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return this.write('unwatched', () => {
      const parsed = parseNamedResources(resources);
      return (t) => addResourcesRule(t, parsed);
    });
  }

  // ---------------------------------------------------------------- releases (Contract 4c)

  async startRelease(request: StartReleaseRequest): Promise<Release> {
    return this.write('unwatched', () => {
      const candidate =
        request?.candidateResources === undefined ? null : parseNamedResources(request.candidateResources);
      if (request?.candidateId !== undefined) parseApi(IdSchema, request.candidateId, 'candidateId');
      return (t) => startReleaseRule(t, request ?? {}, candidate);
    });
  }

  async getRelease(releaseId: string): Promise<Release | null> {
    const id = parseApi(IdSchema, releaseId, 'releaseId');
    return this.read('unwatched', () => getReleaseRule(id));
  }

  async listReleases(): Promise<Release[]> {
    return this.read('unwatched', () => listReleasesRule());
  }

  async promoteRelease(releaseId: string, options: { reason?: string } = {}): Promise<Release> {
    const id = parseApi(IdSchema, releaseId, 'releaseId');
    return this.write('unwatched', () => (t) => endReleaseRule(t, id, 'promote', options.reason));
  }

  async abortRelease(releaseId: string, options: { reason?: string } = {}): Promise<Release> {
    const id = parseApi(IdSchema, releaseId, 'releaseId');
    return this.write('unwatched', () => (t) => endReleaseRule(t, id, 'abort', options.reason));
  }

  async getServingResources(): Promise<ServingResources> {
    return this.read('unwatched', () => servingResourcesRule());
  }

  readonly #evaluations = new Map<string, Promise<Release>>();

  /**
   * Runs the release's sequential test on its recorded results and stores the verdict. Calls while one runs share
   * the next run (so a burst of batches costs two evaluations, not one each).
   */
  async evaluateRelease(releaseId: string): Promise<Release> {
    const id = parseApi(IdSchema, releaseId, 'releaseId');
    const running = this.#evaluations.get(id);
    const run = (running ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const release = await this.read('unwatched', () => getReleaseRule(id));
        if (!release) throw releaseNotFound(id);
        if (release.state !== 'running') return release;
        const data = await collectReleaseData(this, release);
        const verdict = decideRelease(release, data.baseline, data.candidate, this.releaseClock());
        return this.write('unwatched', () => (t) => applyVerdictRule(t, id, release.updateTime, verdict));
      });
    this.#evaluations.set(id, run);
    void run
      .finally(() => {
        if (this.#evaluations.get(id) === run) this.#evaluations.delete(id);
      })
      .catch(() => undefined);
    return run;
  }

  /** Epoch seconds for release decisions (max duration); stores with an injected clock override it. */
  protected releaseClock(): number {
    return Date.now() / 1000;
  }

  async updateResources(resourcesId: string, resources: NamedResourcesInput): Promise<ResourcesUpdate> {
    return this.write('watched', () => {
      const id = parseApi(IdSchema, resourcesId, 'resourcesId');
      const parsed = parseNamedResources(resources);
      return (t) => updateResourcesRule(t, id, parsed);
    });
  }

  async getLatestResources(): Promise<ResourcesUpdate | null> {
    return this.read('unwatched', latestResources);
  }

  async getResourcesById(resourcesId: string): Promise<ResourcesUpdate | null> {
    const id = parseApi(IdSchema, resourcesId, 'resourcesId');
    return this.read('unwatched', () => call('getResources', id));
  }

  async queryResources(options?: QueryResourcesOptions): Promise<PaginatedResult<ResourcesUpdate>> {
    return this.read('unwatched', () => queryResources(options));
  }

  async updateWorker(workerId: string, update?: { heartbeatStats?: JsonObject }): Promise<Worker> {
    return this.write('unwatched', () => {
      const id = parseApi(IdSchema, workerId, 'workerId');
      const u = parseApi(WorkerUpdateInput, update ?? {}, 'updateWorker fields');
      return (t) => updateWorkerRule(t, id, u);
    });
  }

  async getWorkerById(workerId: string): Promise<Worker | null> {
    const id = parseApi(IdSchema, workerId, 'workerId');
    return this.read('unwatched', () => call('getWorker', id));
  }

  async queryWorkers(options?: QueryWorkersOptions): Promise<PaginatedResult<Worker>> {
    return this.read('watched', () => queryWorkers(options));
  }
}

/** Checks `waitForRollouts`' arguments; returns the ids and the deadline (`Date.now()` ms, or null for none). */
export function parseWait(
  rolloutIds: string[],
  options: { timeoutSeconds?: number | null } | undefined,
): { rolloutIds: string[]; deadline: number | null } {
  const o = parseApi(
    WaitInput,
    { rolloutIds, timeoutSeconds: options?.timeoutSeconds ?? null },
    'waitForRollouts arguments',
  );
  const timeout = o.timeoutSeconds ?? null;
  return { rolloutIds: o.rolloutIds, deadline: timeout === null ? null : Date.now() + timeout * 1000 };
}
