import { SpanStatusCode, TraceFlags, type Context } from '@opentelemetry/api';
import type { ReadableSpan, Span as SdkSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Span, SpanInput } from '../schema/index';
import { ConcurrencyLimit } from '../concurrency-limit';
import type { LightningStore } from '../store/index';
import { runDeferredSpanWork } from './deferred-span-work';
import { exportSpansSync, storeReopenSpec, warmExitExporter, type ExitExportGroup } from './exit-export';
import { getRolloutContext, isRecordingOff, type RolloutContext } from './rollout-context';
import { hrTimeToSeconds, spanFromOpenTelemetry, wireSpanFromOpenTelemetry, type WireSpan } from './span-conversion';

/** Where the processor reports drops and export failures. */
export interface TracerLogger {
  warn(message: string): void;
}

/** Options of {@link LightningSpanProcessor}. */
export interface LightningSpanProcessorOptions {
  /** Most finished spans held before export; further spans are dropped and counted. Default 2048. */
  maxQueueSize?: number;
  /** Most spans per `addSpans` call; a full batch exports at once. Default 256. */
  maxExportBatchSize?: number;
  /**
   * `addSpans` calls in flight at once (sequence ids are still taken one window after another, in end order). Default
   * 4.
   */
  maxConcurrentExports?: number;
  /** Delay before a partial batch is exported, in ms. Default 200. */
  scheduledDelayMillis?: number;
  /** Called once per dropped span, with the running total. */
  onDrop?: (info: { rolloutId: string; attemptId: string; spanName: string; droppedTotal: number }) => void;
  /** Where drops and export failures are reported. Default `console`. */
  logger?: TracerLogger;
}

/**
 * Chooses an owner for a span that starts outside any rollout context (and not under a span of one): `@agl/client`
 * records an LLM call or an agent run made outside any rollout as a rollout of its own (the span's children inherit
 * it). Returns `undefined` to leave the span unowned.
 */
export type UnownedSpanHandler = (span: {
  readonly name: string;
  spanContext(): { readonly spanId: string };
}) => RolloutContext | undefined;

let unownedSpanHandler: UnownedSpanHandler | undefined;

/**
 * Sets (or clears, with `undefined`) the process-wide {@link UnownedSpanHandler} every `LightningSpanProcessor`
 * consults; returns the previous one.
 */
export function setUnownedSpanHandler(handler: UnownedSpanHandler | undefined): UnownedSpanHandler | undefined {
  const previous = unownedSpanHandler;
  unownedSpanHandler = handler;
  return previous;
}

/** Counters of {@link LightningSpanProcessor}. */
export interface SpanProcessorStats {
  /** Spans waiting for export. */
  queued: number;
  /** Spans the store accepted (duplicates not counted). */
  exported: number;
  /** Spans dropped because the queue was full or the processor was shut down. */
  dropped: number;
  /** Spans whose export failed (store error). */
  failed: number;
  /** Spans that ended outside any rollout context and were not exported. */
  unowned: number;
}

interface QueuedSpan {
  span: ReadableSpan;
  ctx: RolloutContext;
  startTime: number | null;
  endTime: number | null;
}

/**
 * Start and end in seconds. The SDK anchors a span that got no explicit start on `Date.now()` (whole milliseconds) and
 * measures its duration with `performance.now()`; that loses the sub-millisecond order between a call and the reward
 * emitted right after it. For such spans the start is rebuilt from the SDK's own `performance.now()` reading
 * (`performance.timeOrigin + _performanceStartTime`, the clock emitters use too) and the measured duration is kept.
 * Spans with explicit times, or an SDK without those fields, keep the SDK's times.
 */
function preciseTimes(span: ReadableSpan): { startTime: number | null; endTime: number | null } {
  const startTime = hrTimeToSeconds(span.startTime);
  const endTime = hrTimeToSeconds(span.endTime);
  const sdk = span as unknown as { _startTimeProvided?: unknown; _performanceStartTime?: unknown };
  if (startTime === null || endTime === null) return { startTime, endTime };
  if (sdk._startTimeProvided !== false || typeof sdk._performanceStartTime !== 'number') return { startTime, endTime };
  const start = (performance.timeOrigin + sdk._performanceStartTime) / 1000;
  return { startTime: start, endTime: start + Math.max(0, endTime - startTime) };
}

/**
 * An OpenTelemetry span processor that batches finished spans into any `LightningStore` (`addSpans`), owned by the
 * rollout context that was active when each span *started*, so concurrent rollouts in one process never mix. Sequence
 * ids come from the store (`getNextSpanSequenceIds`) in end order. The queue is bounded: spans beyond `maxQueueSize`
 * are dropped, counted and reported.
 */
export class LightningSpanProcessor implements SpanProcessor {
  readonly #owners = new WeakMap<object, RolloutContext>();
  readonly #liveOwners = new Map<string, RolloutContext>();
  /** Spans of a rollout started and not ended yet, in start order (closed with an error when the process ends). */
  readonly #open = new Map<string, SdkSpan>();
  /** Batches taken off the queue whose delivery has not settled (exported again synchronously at exit). */
  readonly #inFlight = new Set<QueuedSpan[]>();
  /** Stores already seen by {@link #warm}. */
  readonly #warmedStores = new WeakSet<LightningStore>();
  #queue: QueuedSpan[] = [];
  /** Ended spans of contexts with a `spanSink`, handed over on the next turn of the event loop. */
  #sinkQueue: QueuedSpan[] = [];
  #sinkTimer: ReturnType<typeof setImmediate> | null = null;
  readonly #maxQueueSize: number;
  readonly #maxBatch: number;
  readonly #delay: number;
  readonly #onDrop: LightningSpanProcessorOptions['onDrop'];
  readonly #logger: TracerLogger;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #chain: Promise<void> = Promise.resolve();
  /** The export chained after the one in flight that has not taken its batch yet. */
  #next: Promise<void> | null = null;
  /** Spans ever queued, and ever taken off the queue by an export (forceFlush waits for the former to reach the latter). */
  #queuedTotal = 0;
  #takenTotal = 0;
  /** Batches numbered and on their way to the store (at most `maxConcurrentExports` of them calling it at once). */
  readonly #deliveries = new Set<Promise<void>>();
  /** Spans taken off the queue and not yet delivered (or failed). */
  #undelivered = 0;
  readonly #maxConcurrent: number;
  /** The `addSpans` calls in flight (`maxConcurrentExports`). */
  readonly #slots: ConcurrencyLimit;
  #shutdown = false;
  /** `whenExported` callers: each resolves once the spans queued before its call are with their store. */
  #exportWaiters: Array<{ target: number; resolve: () => void }> = [];
  #droppedUnreported = 0;
  readonly #stats = { exported: 0, dropped: 0, failed: 0, unowned: 0 };

  constructor(options: LightningSpanProcessorOptions = {}) {
    this.#maxQueueSize = options.maxQueueSize ?? 2048;
    this.#maxBatch = Math.max(1, options.maxExportBatchSize ?? 256);
    this.#delay = options.scheduledDelayMillis ?? 200;
    this.#maxConcurrent = Math.max(1, options.maxConcurrentExports ?? 4);
    this.#slots = new ConcurrencyLimit(this.#maxConcurrent);
    this.#onDrop = options.onDrop;
    this.#logger = options.logger ?? console;
  }

  /** Current counters. */
  stats(): SpanProcessorStats {
    return { queued: this.#queue.length + this.#sinkQueue.length, ...this.#stats };
  }

  onStart(span: SdkSpan, parentContext: Context): void {
    // Inside withoutRecording nothing owns a span (a framework's own span, say): it ends unowned, never unscoped.
    if (isRecordingOff()) return;
    let ctx = getRolloutContext();
    if (!ctx) {
      // A span started outside the async context but under a live span of a rollout inherits that rollout.
      const parentId = span.parentSpanContext?.spanId;
      ctx = parentId ? this.#liveOwners.get(parentId) : undefined;
    }
    ctx ??= unownedSpanHandler?.(span);
    void parentContext;
    if (!ctx) return;
    this.#owners.set(span, ctx);
    this.#liveOwners.set(span.spanContext().spanId, ctx);
    this.#open.set(span.spanContext().spanId, span);
  }

  onEnd(span: ReadableSpan): void {
    const spanId = span.spanContext().spanId;
    const ctx = this.#owners.get(span);
    this.#liveOwners.delete(spanId);
    this.#open.delete(spanId);
    if (!ctx) {
      this.#stats.unowned += 1;
      return;
    }
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.#shutdown || this.#queue.length >= this.#maxQueueSize) {
      this.#drop(span, ctx);
      return;
    }
    const item = { span, ctx, ...preciseTimes(span) };
    if (ctx.wireSpanSink || ctx.spanSink) {
      this.#sinkQueue.push(item);
      this.#sinkTimer ??= setImmediate(() => this.#drainSinks());
      return;
    }
    this.#queue.push(item);
    this.#queuedTotal += 1;
    this.#warm(ctx.store);
    if (this.#queue.length >= this.#maxBatch) this.#scheduleNow();
    else this.#scheduleLater();
  }

  /**
   * Exports every span queued before the call and waits for it (and for exports in flight). Calls that arrive while an
   * export runs share the next one, so many rollouts finishing at once cost one store round trip, not one each.
   */
  async forceFlush(): Promise<void> {
    this.#drainSinks();
    this.#clearTimer();
    const target = this.#queuedTotal;
    while (this.#takenTotal < target) await this.#scheduleExport();
    await this.#chain;
    await Promise.all(this.#deliveries);
    this.#reportDrops();
  }

  /**
   * Resolves once every span queued before the call has been handed to its store, without forcing an export: the
   * normal batching schedule (`scheduledDelayMillis`, full batches) runs it. A production recorder uses it to send a
   * rollout's end after its spans while keeping one export for many requests.
   */
  async whenExported(): Promise<void> {
    this.#drainSinks();
    const target = this.#queuedTotal;
    if (this.#takenTotal < target) {
      await new Promise<void>((resolve) => this.#exportWaiters.push({ target, resolve }));
      return;
    }
    await Promise.all(this.#deliveries);
  }

  /**
   * Calls `callback` once the spans ended so far are with their store or sink: synchronously when only sink spans were
   * waiting (handed over now), else when {@link whenExported} resolves.
   */
  afterSpansHanded(callback: () => void): void {
    this.#drainSinks();
    if (this.#takenTotal >= this.#queuedTotal && this.#deliveries.size === 0) {
      callback();
      return;
    }
    void this.whenExported().then(callback, callback);
  }

  #releaseExportWaiters(): void {
    if (this.#exportWaiters.length === 0) return;
    const done = Promise.all(this.#deliveries);
    this.#exportWaiters = this.#exportWaiters.filter((waiter) => {
      if (waiter.target > this.#takenTotal) return true;
      void done.then(waiter.resolve, waiter.resolve);
      return false;
    });
  }

  /** Flushes, then refuses further spans (counted as dropped). */
  async shutdown(): Promise<void> {
    await this.forceFlush();
    this.#shutdown = true;
  }

  /**
   * Ends every span that is still open (the innermost first) with an ERROR status and `message`: what a crash or a
   * failed rollout leaves behind (the agent span, the chain around the failed call, a call cut off mid-flight). With
   * `owner`, only that attempt's spans. Returns how many were ended.
   */
  closeOpenSpans(message: string, owner?: { rolloutId: string; attemptId: string }): number {
    // A call that has finished but whose span's end was deferred ends as it finished, not as cut off.
    runDeferredSpanWork();
    let closed = 0;
    for (const [spanId, span] of [...this.#open].reverse()) {
      const ctx = this.#owners.get(span);
      if (owner && (ctx?.rolloutId !== owner.rolloutId || ctx.attemptId !== owner.attemptId)) continue;
      this.#open.delete(spanId);
      if (span.ended) continue;
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      span.end();
      closed += 1;
    }
    return closed;
  }

  /**
   * Exports, synchronously, every span queued or on its way to the store (deliveries in flight are sent again: the
   * store keeps one copy per span id). For `process.on('exit')`, where no promise settles any more: a worker thread
   * reopens each store that has a {@link storeReopenSpec} (the HTTP `StoreClient`) while this thread waits, at most
   * `timeoutMs`. Spans of stores that cannot be reopened (in-process stores) are left alone. Returns how many spans were
   * handed over; an error is reported through the logger.
   */
  exportPendingSync(timeoutMs: number): number {
    this.#drainSinks();
    this.#clearTimer();
    const queued = this.#queue.splice(0);
    this.#takenTotal += queued.length;
    const pending = [...[...this.#inFlight].flat(), ...queued];
    this.#inFlight.clear();
    const groups = new Map<LightningStore, ExitExportGroup | null>();
    for (const item of pending) {
      let group = groups.get(item.ctx.store);
      if (group === undefined) {
        const spec = storeReopenSpec(item.ctx.store);
        group = spec ? { spec, spans: [] } : null;
        groups.set(item.ctx.store, group);
      }
      const owner = { rolloutId: item.ctx.rolloutId, attemptId: item.ctx.attemptId, sequenceId: 0 };
      group?.spans.push(spanFromOpenTelemetry(item.span, owner, { startTime: item.startTime, endTime: item.endTime }));
    }
    const ready = [...groups.values()].filter((g): g is ExitExportGroup => g !== null);
    const count = ready.reduce((n, g) => n + g.spans.length, 0);
    const error = exportSpansSync(ready, timeoutMs);
    if (error) this.#fail(count, error);
    else this.#stats.exported += count;
    return count;
  }

  /** Hands the spans waiting for a `spanSink` to their sinks, converted, one call per sink, in end order. */
  #drainSinks(): void {
    // Spans whose end an adapter deferred off the app's path end first (so they are handed over now too).
    runDeferredSpanWork();
    if (this.#sinkTimer) clearImmediate(this.#sinkTimer);
    this.#sinkTimer = null;
    if (this.#sinkQueue.length === 0) return;
    const items = this.#sinkQueue;
    this.#sinkQueue = [];
    const bySink = new Map<NonNullable<RolloutContext['spanSink']>, SpanInput[]>();
    const byWireSink = new Map<NonNullable<RolloutContext['wireSpanSink']>, WireSpan[]>();
    for (const item of items) {
      const owner = { rolloutId: item.ctx.rolloutId, attemptId: item.ctx.attemptId, sequenceId: 0 };
      const times = { startTime: item.startTime, endTime: item.endTime };
      const wireSink = item.ctx.wireSpanSink;
      if (wireSink) {
        const span = wireSpanFromOpenTelemetry(item.span, owner, times);
        const list = byWireSink.get(wireSink);
        if (list) list.push(span);
        else byWireSink.set(wireSink, [span]);
        continue;
      }
      const span = spanFromOpenTelemetry(item.span, owner, times);
      const sink = item.ctx.spanSink!;
      const list = bySink.get(sink);
      if (list) list.push(span);
      else bySink.set(sink, [span]);
    }
    for (const [sink, spans] of bySink) this.#handOver(sink, spans);
    for (const [sink, spans] of byWireSink) this.#handOver(sink, spans);
  }

  /** One sink call; a throw loses only these spans (counted as failed and reported). */
  #handOver<S>(sink: (spans: S[]) => void, spans: S[]): void {
    try {
      sink(spans);
      this.#stats.exported += spans.length;
    } catch (error) {
      this.#fail(spans.length, error);
    }
  }

  /** A store that can be reopened from another thread gets the exit exporter ready (once per store). */
  #warm(store: LightningStore): void {
    if (this.#warmedStores.has(store)) return;
    this.#warmedStores.add(store);
    const spec = storeReopenSpec(store);
    if (spec) warmExitExporter(spec);
  }

  #drop(span: ReadableSpan, ctx: RolloutContext): void {
    this.#stats.dropped += 1;
    this.#droppedUnreported += 1;
    this.#onDrop?.({
      rolloutId: ctx.rolloutId,
      attemptId: ctx.attemptId,
      spanName: span.name,
      droppedTotal: this.#stats.dropped,
    });
    if (this.#droppedUnreported === 1) this.#scheduleLater();
  }

  #reportDrops(): void {
    if (this.#droppedUnreported === 0) return;
    const n = this.#droppedUnreported;
    this.#droppedUnreported = 0;
    this.#logger.warn(
      `[agl tracer] dropped ${n} span(s) (${this.#stats.dropped} in total): the export queue was full ` +
        `(maxQueueSize=${this.#maxQueueSize}) or the tracer was shut down. Raise maxQueueSize or flush more often.`,
    );
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #scheduleLater(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.forceFlush();
    }, this.#delay);
    this.#timer.unref?.();
  }

  #scheduleNow(): void {
    this.#clearTimer();
    void this.#scheduleExport();
  }

  /**
   * Schedules one export unless one is already waiting to start. Exports take the oldest queued spans (at most one
   * window: `maxConcurrentExports × maxExportBatchSize`) and number them (`getNextSpanSequenceIds`, one request per
   * store) strictly one after another, so sequence ids follow end order. The numbered spans go to the store in
   * `addSpans` calls of at most `maxExportBatchSize`, up to `maxConcurrentExports` at once; the next window is numbered
   * while the last one is delivered (never more than two windows between the queue and the store), so a store round
   * trip is not paid twice per window.
   */
  #scheduleExport(): Promise<void> {
    if (this.#next) return this.#next;
    const next = this.#chain
      .then(async () => {
        const window = this.#maxConcurrent * this.#maxBatch;
        while (this.#undelivered >= window && this.#deliveries.size > 0) await Promise.race(this.#deliveries);
        this.#next = null;
        const batch = this.#queue.splice(0, window);
        if (batch.length > 0) this.#inFlight.add(batch);
        this.#takenTotal += batch.length;
        this.#undelivered += batch.length;
        const byStore = new Map<LightningStore, QueuedSpan[]>();
        for (const item of batch) {
          const list = byStore.get(item.ctx.store);
          if (list) list.push(item);
          else byStore.set(item.ctx.store, [item]);
        }
        const numbered = await Promise.all([...byStore].map(([store, items]) => this.#number(store, items)));
        const settled: Promise<void>[] = [];
        for (const group of numbered) {
          if (!group) continue; // its numbering failed and was counted
          for (let i = 0; i < group.items.length; i += this.#maxBatch) {
            const end = i + this.#maxBatch;
            const items = group.items.slice(i, end);
            const delivery: Promise<void> = this.#slots
              .acquire()
              .then(() => this.#deliver(group.store, items, group.spans.slice(i, end)))
              .finally(() => {
                this.#slots.release();
                this.#undelivered -= items.length;
                this.#deliveries.delete(delivery);
                this.#reportDrops();
              });
            this.#deliveries.add(delivery);
            settled.push(delivery);
          }
        }
        void Promise.all(settled).then(() => this.#inFlight.delete(batch));
        this.#releaseExportWaiters();
      })
      .catch(() => undefined);
    this.#next = next;
    this.#chain = next;
    return next;
  }

  /** Sequence ids from the store, in end order, and the store spans; `null` (counted as failed) when the store refuses. */
  async #number(
    store: LightningStore,
    items: QueuedSpan[],
  ): Promise<{ store: LightningStore; items: QueuedSpan[]; spans: SpanInput[] } | null> {
    try {
      const sequenceIds = await store.getNextSpanSequenceIds(
        items.map((item) => [item.ctx.rolloutId, item.ctx.attemptId] as const),
      );
      const spans = items.map((item, i) =>
        spanFromOpenTelemetry(
          item.span,
          { rolloutId: item.ctx.rolloutId, attemptId: item.ctx.attemptId, sequenceId: sequenceIds[i] ?? 0 },
          { startTime: item.startTime, endTime: item.endTime },
        ),
      );
      return { store, items, spans };
    } catch (error) {
      this.#undelivered -= items.length;
      this.#fail(items.length, error);
      return null;
    }
  }

  async #deliver(store: LightningStore, items: QueuedSpan[], spans: SpanInput[]): Promise<void> {
    try {
      this.#delivered(items, await store.addSpans(spans));
      return;
    } catch (error) {
      if (new Set(items.map((i) => `${i.ctx.rolloutId}\u0000${i.ctx.attemptId}`)).size === 1) {
        this.#fail(items.length, error);
        return;
      }
    }
    // One bad owner (unknown rollout, closed attempt) must not lose the other rollouts' spans: retry per owner.
    const groups = new Map<string, number[]>();
    items.forEach((item, i) => {
      const key = `${item.ctx.rolloutId}\u0000${item.ctx.attemptId}`;
      const list = groups.get(key);
      if (list) list.push(i);
      else groups.set(key, [i]);
    });
    for (const indexes of groups.values()) {
      try {
        const inserted = await store.addSpans(indexes.map((i) => spans[i]!));
        this.#delivered(
          indexes.map((i) => items[i]!),
          inserted,
        );
      } catch (error) {
        this.#fail(indexes.length, error);
      }
    }
  }

  #delivered(items: QueuedSpan[], inserted: Span[]): void {
    this.#stats.exported += inserted.length;
    const callbacks = new Map<RolloutContext['onSpans'], Span[]>();
    const ctxByOwner = new Map<string, RolloutContext>();
    for (const item of items) ctxByOwner.set(`${item.ctx.rolloutId}\u0000${item.ctx.attemptId}`, item.ctx);
    for (const span of inserted) {
      const ctx = ctxByOwner.get(`${span.rolloutId}\u0000${span.attemptId}`);
      if (!ctx?.onSpans) continue;
      const list = callbacks.get(ctx.onSpans);
      if (list) list.push(span);
      else callbacks.set(ctx.onSpans, [span]);
    }
    for (const [callback, spans] of callbacks) {
      try {
        callback?.(spans);
      } catch (error) {
        this.#logger.warn(`[agl tracer] an onSpans callback threw: ${String(error)}`);
      }
    }
  }

  #fail(count: number, error: unknown): void {
    this.#stats.failed += count;
    this.#logger.warn(
      `[agl tracer] could not export ${count} span(s) to the store: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
