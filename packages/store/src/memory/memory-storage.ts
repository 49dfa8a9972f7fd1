import { NotFoundError } from '@agl/core/errors';
import {
  isTerminalStatus,
  type Attempt,
  type Release,
  type ResourcesUpdate,
  type Rollout,
  type RolloutStatus,
  type Span,
  type Worker,
} from '@agl/core/schema';
import type { AttemptRef } from '@agl/core/store';
import { cloneData } from '../engine/clone-data';
import type { StoreStorage } from '../engine/storage';
import { memoryTrafficRows } from '../engine/traffic-rows';
import type { TrafficRows, TrafficRowsQuery } from '../engine/traffic-rows';

/** Span eviction settings of {@link MemoryStorage} (AGL 0.3 §2.9). */
export interface SpanEvictionOptions {
  /** Evict when the estimated span bytes exceed this. */
  evictionThresholdBytes: number;
  /** Evict whole rollouts, oldest start time first, until the total is at most this (must be below the threshold). */
  safeThresholdBytes: number;
  /** Estimated size of one span in bytes; default: the length of its JSON. */
  spanSizeEstimator?: (span: Span) => number;
}

const spanKey = (s: { rolloutId: string; attemptId: string; spanId: string }): string =>
  `${s.attemptId}\u0000${s.spanId}`;

/**
 * Maps in memory. Transactions keep an undo log, so a failed operation leaves nothing behind. Objects are copied in
 * and out (with `cloneData`, which gives what `structuredClone` gives for this JSON-like data, several times faster: a
 * span is a heartbeat, which reads and writes its rollout and attempt), so callers never share state with the store.
 */
export class MemoryStorage implements StoreStorage {
  readonly name = 'MemoryStore';
  readonly #rollouts = new Map<string, Rollout>();
  readonly #attempts = new Map<string, Attempt[]>();
  readonly #spans = new Map<string, Map<string, Span>>();
  readonly #sequences = new Map<string, number>();
  readonly #queue: string[] = [];
  #queueHead = 0;
  readonly #queued = new Map<string, number>();
  readonly #resources = new Map<string, ResourcesUpdate>();
  #latestResources: string | null = null;
  readonly #releases = new Map<string, Release>();
  readonly #workers = new Map<string, Worker>();
  #attemptCount = 0;
  #spanCount = 0;
  #undo: Array<() => void> | null = null;
  readonly #eviction: SpanEvictionOptions | undefined;
  readonly #spanBytes = new Map<string, number>();
  #totalSpanBytes = 0;
  readonly #evicted = new Set<string>();

  constructor(eviction?: SpanEvictionOptions) {
    this.#eviction = eviction;
  }

  #log(fn: () => void): void {
    this.#undo?.push(fn);
  }

  transaction<T>(fn: () => T): T {
    if (this.#undo !== null) return fn();
    this.#undo = [];
    try {
      const result = fn();
      this.#undo = null;
      this.#maybeEvict();
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue.splice(0, this.#queueHead);
        this.#queueHead = 0;
      }
      return result;
    } catch (error) {
      const undo = this.#undo ?? [];
      this.#undo = null;
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw error;
    }
  }

  read<T>(fn: () => T): T {
    return fn();
  }

  #setMap<K, V>(map: Map<K, V>, key: K, value: V): void {
    const had = map.has(key);
    const old = map.get(key);
    map.set(key, value);
    this.#log(() => (had ? map.set(key, old as V) : map.delete(key)));
  }

  getRollout(rolloutId: string): Rollout | null {
    const r = this.#rollouts.get(rolloutId);
    return r ? cloneData(r) : null;
  }

  insertRollouts(rollouts: readonly Rollout[]): void {
    for (const r of rollouts) this.#setMap(this.#rollouts, r.rolloutId, cloneData(r));
  }

  updateRollout(rollout: Rollout): void {
    this.#setMap(this.#rollouts, rollout.rolloutId, cloneData(rollout));
  }

  listRollouts(where?: { statuses?: readonly RolloutStatus[]; ids?: readonly string[] }): Rollout[] {
    const statuses = where?.statuses ? new Set(where.statuses) : null;
    const source = where?.ids
      ? [...new Set(where.ids)].flatMap((id) => {
          const r = this.#rollouts.get(id);
          return r ? [r] : [];
        })
      : this.#rollouts.values();
    const out: Rollout[] = [];
    for (const r of source) if (!statuses || statuses.has(r.status)) out.push(cloneData(r));
    if (where?.ids) {
      const order = [...this.#rollouts.keys()];
      const rank = new Map(order.map((id, i) => [id, i]));
      out.sort((a, b) => rank.get(a.rolloutId)! - rank.get(b.rolloutId)!);
    }
    return out;
  }

  unfinishedRolloutIds(rolloutIds: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const id of rolloutIds) {
      const status = this.#rollouts.get(id)?.status;
      if (status !== undefined && !isTerminalStatus(status)) out.add(id);
    }
    return out;
  }

  countRollouts(): number {
    return this.#rollouts.size;
  }

  getAttempt(rolloutId: string, attemptId: string): Attempt | null {
    const a = this.#attempts.get(rolloutId)?.find((x) => x.attemptId === attemptId);
    return a ? cloneData(a) : null;
  }

  /** The live-traffic rows of a window, counted over the rollouts in place (nothing is copied but the rows). */
  trafficRows(query: TrafficRowsQuery): TrafficRows {
    return memoryTrafficRows(
      this.#rollouts.values(),
      (rolloutId) => this.#attempts.get(rolloutId)?.at(-1)?.attemptId ?? null,
      (rolloutId) => this.#spans.get(rolloutId)?.values() ?? [],
      query,
    );
  }

  getLatestAttempt(rolloutId: string): Attempt | null {
    const a = this.#attempts.get(rolloutId)?.at(-1);
    return a ? cloneData(a) : null;
  }

  getLatestAttempts(rolloutIds: readonly string[]): Map<string, Attempt> {
    const out = new Map<string, Attempt>();
    for (const id of rolloutIds) {
      const a = this.#attempts.get(id)?.at(-1);
      if (a) out.set(id, cloneData(a));
    }
    return out;
  }

  listAttempts(rolloutId: string): Attempt[] {
    return (this.#attempts.get(rolloutId) ?? []).map((x) => cloneData(x));
  }

  countAttempts(): number {
    return this.#attemptCount;
  }

  insertAttempt(attempt: Attempt): void {
    let list = this.#attempts.get(attempt.rolloutId);
    if (!list) {
      list = [];
      this.#setMap(this.#attempts, attempt.rolloutId, list);
    }
    const target = list;
    target.push(cloneData(attempt));
    this.#attemptCount += 1;
    this.#log(() => {
      target.pop();
      this.#attemptCount -= 1;
    });
  }

  updateAttempt(attempt: Attempt): void {
    const list = this.#attempts.get(attempt.rolloutId) ?? [];
    const index = list.findIndex((x) => x.attemptId === attempt.attemptId);
    if (index < 0) return;
    const old = list[index]!;
    list[index] = cloneData(attempt);
    this.#log(() => (list[index] = old));
  }

  insertSpans(spans: readonly Span[]): Span[] {
    const inserted: Span[] = [];
    for (const span of spans) {
      let bucket = this.#spans.get(span.rolloutId);
      if (!bucket) {
        bucket = new Map();
        this.#setMap(this.#spans, span.rolloutId, bucket);
      }
      const key = spanKey(span);
      if (bucket.has(key)) continue;
      const target = bucket;
      target.set(key, cloneData(span));
      this.#spanCount += 1;
      const bytes = this.#eviction
        ? (this.#eviction.spanSizeEstimator ?? ((s: Span) => JSON.stringify(s).length))(span)
        : 0;
      this.#spanBytes.set(span.rolloutId, (this.#spanBytes.get(span.rolloutId) ?? 0) + bytes);
      this.#totalSpanBytes += bytes;
      this.#log(() => {
        target.delete(key);
        this.#spanCount -= 1;
        this.#spanBytes.set(span.rolloutId, (this.#spanBytes.get(span.rolloutId) ?? 0) - bytes);
        this.#totalSpanBytes -= bytes;
      });
      inserted.push(span);
    }
    return inserted;
  }

  /** Evicts whole rollouts' spans, oldest rollout first, once the estimate passes the threshold. */
  #maybeEvict(): void {
    const ev = this.#eviction;
    if (!ev || this.#totalSpanBytes <= ev.evictionThresholdBytes) return;
    const victims = [...this.#spans.keys()]
      .map((id) => ({ id, start: this.#rollouts.get(id)?.startTime ?? 0 }))
      .sort((a, b) => a.start - b.start);
    for (const { id } of victims) {
      if (this.#totalSpanBytes <= ev.safeThresholdBytes) break;
      this.#spanCount -= this.#spans.get(id)?.size ?? 0;
      this.#totalSpanBytes -= this.#spanBytes.get(id) ?? 0;
      this.#spans.delete(id);
      this.#spanBytes.delete(id);
      this.#evicted.add(id);
    }
  }

  /** Estimated bytes of the spans held now. */
  get totalSpanBytes(): number {
    return this.#totalSpanBytes;
  }

  listSpans(rolloutId: string, attemptId: string | null): Span[] {
    const out: Span[] = [];
    for (const span of this.#spansOf(rolloutId))
      if (attemptId === null || span.attemptId === attemptId) out.push(cloneData(span));
    return out;
  }

  listNamedSpansOfAttempts(attempts: readonly AttemptRef[], name: string): Span[] {
    const out: Span[] = [];
    for (const { rolloutId, attemptId } of attempts)
      for (const span of this.#spansOf(rolloutId))
        if (span.attemptId === attemptId && span.name === name) out.push(cloneData(span));
    return out;
  }

  /** The stored spans of a rollout in insertion order; a rollout whose spans were evicted is a `NotFoundError`. */
  #spansOf(rolloutId: string): Iterable<Span> {
    const bucket = this.#spans.get(rolloutId);
    if (!bucket && this.#evicted.has(rolloutId)) {
      throw new NotFoundError(
        'spans',
        rolloutId,
        `Spans for rollout ${rolloutId} have been evicted from memory. Raise the MemoryStore eviction threshold, or use SqliteStore to keep every span.`,
      );
    }
    return bucket?.values() ?? [];
  }

  countSpans(): number {
    return this.#spanCount;
  }

  incrementSequence(rolloutId: string, count: number): number {
    const next = (this.#sequences.get(rolloutId) ?? 0) + count;
    this.#setMap(this.#sequences, rolloutId, next);
    return next;
  }

  raiseSequence(rolloutId: string, value: number): void {
    if ((this.#sequences.get(rolloutId) ?? 0) < value) this.#setMap(this.#sequences, rolloutId, value);
  }

  enqueue(rolloutIds: readonly string[]): void {
    for (const id of rolloutIds) {
      this.#queue.push(id);
      this.#queued.set(id, (this.#queued.get(id) ?? 0) + 1);
      this.#log(() => {
        this.#queue.pop();
        this.#decQueued(id);
      });
    }
  }

  #decQueued(id: string): void {
    const n = (this.#queued.get(id) ?? 0) - 1;
    if (n <= 0) this.#queued.delete(id);
    else this.#queued.set(id, n);
  }

  hasQueued(): boolean {
    return this.#queueHead < this.#queue.length;
  }

  dequeue(): string | null {
    if (this.#queueHead >= this.#queue.length) return null;
    const id = this.#queue[this.#queueHead]!;
    this.#queueHead += 1;
    this.#decQueued(id);
    this.#log(() => {
      this.#queueHead -= 1;
      this.#queued.set(id, (this.#queued.get(id) ?? 0) + 1);
    });
    return id;
  }

  isQueued(rolloutId: string): boolean {
    return this.#queued.has(rolloutId);
  }

  getResources(resourcesId: string): ResourcesUpdate | null {
    const r = this.#resources.get(resourcesId);
    return r ? cloneData(r) : null;
  }

  putResources(resources: ResourcesUpdate, options: { latest?: boolean } = {}): void {
    this.#setMap(this.#resources, resources.resourcesId, cloneData(resources));
    if (options.latest !== false) this.setLatestResourcesId(resources.resourcesId);
  }

  setLatestResourcesId(resourcesId: string): void {
    const old = this.#latestResources;
    this.#latestResources = resourcesId;
    this.#log(() => (this.#latestResources = old));
  }

  getRelease(releaseId: string): Release | null {
    const r = this.#releases.get(releaseId);
    return r ? cloneData(r) : null;
  }

  putRelease(release: Release): void {
    this.#setMap(this.#releases, release.releaseId, cloneData(release));
  }

  listReleases(): Release[] {
    return [...this.#releases.values()].map((x) => cloneData(x));
  }

  getLatestResourcesId(): string | null {
    return this.#latestResources;
  }

  listResources(): ResourcesUpdate[] {
    return [...this.#resources.values()].map((x) => cloneData(x));
  }

  countResources(): number {
    return this.#resources.size;
  }

  getWorker(workerId: string): Worker | null {
    const w = this.#workers.get(workerId);
    return w ? cloneData(w) : null;
  }

  putWorker(worker: Worker): void {
    this.#setMap(this.#workers, worker.workerId, cloneData(worker));
  }

  listWorkers(): Worker[] {
    return [...this.#workers.values()].map((x) => cloneData(x));
  }

  countWorkers(): number {
    return this.#workers.size;
  }

  close(): void {}
}
