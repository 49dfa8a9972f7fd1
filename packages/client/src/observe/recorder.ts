import { fromWire, toWire, type JsonObject, type JsonValue, type Span, type SpanInput } from '@agl/core/schema';
import type { ApplyRecordsResult, LightningStore } from '@agl/core/store';
import { DEFAULT_LLM_CALL_MATCH } from '@agl/core/semconv';
import type { WireSpan } from '@agl/core/tracer';
import { estimateSpansBytes, RecordBuffer, recordBytes } from './record-buffer';
import type { RecordRedaction } from './redact';

/** Where the recorder reports drops, export failures and rejected records. */
export interface ObserveLogger {
  warn(message: string): void;
}

/** Counters of the production recorder (`observeStats()`). */
export interface ObserveStats {
  /** Rollouts recorded (accepted into the buffer), unscoped ones included. */
  recorded: number;
  /** Requests that ran unrecorded because of `sampleRate`. */
  sampledOut: number;
  /** Records waiting in the buffer. */
  buffered: number;
  /**
   * Memory the records waiting in the buffer hold, bytes: their wire JSON as V8 keeps it (one byte a character, two
   * when a record holds a character beyond Latin-1) plus a small overhead per record.
   */
  bufferedBytes: number;
  /** Rollouts dropped whole because the buffer was full (nothing of them reaches the store). */
  dropped: number;
  /** Spans dropped because the buffer was full after their rollout was accepted. */
  droppedSpans: number;
  /** Records the store applied. */
  exported: number;
  /** Batches whose export failed (store down or slow); they are retried with backoff. */
  failedExports: number;
  /** Records the store refused (`rejected` in its answer); not retried. */
  rejected: number;
  /**
   * LLM calls and agent runs made outside any rollout (each recorded as a rollout of its own holding all its spans, or,
   * with `unscoped: false`, LLM calls only counted).
   */
  unscoped: number;
  /**
   * Of those, calls over the rate bound (`unscopedPerSecond`): not recorded as their own rollout, only counted into one
   * rollout per minute (`metadata.folded_calls`).
   */
  unscopedFolded: number;
}

/** All counters at zero (a process with no store configured reports these). */
export function emptyStats(): ObserveStats {
  return {
    recorded: 0,
    sampledOut: 0,
    buffered: 0,
    bufferedBytes: 0,
    dropped: 0,
    droppedSpans: 0,
    exported: 0,
    failedExports: 0,
    rejected: 0,
    unscoped: 0,
    unscopedFolded: 0,
  };
}

/** Settings of a {@link Recorder}. */
export interface RecorderSettings {
  /**
   * Sends a batch of records, each already encoded as wire JSON (`JSON.stringify(toWire('productionRecord', r))`);
   * throws when the store cannot be reached (the batch is retried). `signal` aborts the request ({@link Recorder.halt}).
   */
  send: (records: readonly string[], signal: AbortSignal) => Promise<ApplyRecordsResult>;
  maxBufferedRecords: number;
  maxBufferedBytes: number;
  maxBatchRecords: number;
  maxBatchBytes: number;
  /** Delay before a partial batch goes out (also between two exports while records trickle in), ms. */
  flushDelayMs: number;
  /** Backoff after a failed export: starts here, doubles, capped at `maxBackoffMs`. */
  minBackoffMs: number;
  maxBackoffMs: number;
  /** Masks secrets in spans and in rollout input and metadata; `null` = none. */
  redact: RecordRedaction | null;
  logger: ObserveLogger;
  /** Clock (epoch ms), injectable for tests. */
  now?: () => number;
  /** Called once, when the first record is queued. */
  onFirstRecord?: () => void;
}

/** A `spans` record waiting for the export loop to serialise it (wire form). */
type SpansRecord = { kind: 'spans'; spans: WireSpan[] };

interface LiveRollout {
  attemptId: string;
  nextSequenceId: number;
  /** A rollout of work done outside any rollout (an LLM call, an agent run): it ends with its root span. */
  unscoped: boolean;
  /** The unscoped rollout's root span (its end ends the rollout); without one, the first span handed over does. */
  rootSpanId?: string;
  /** Started through {@link Recorder.start}: room for its end record is kept in the buffer. */
  started: boolean;
  /**
   * An unscoped agent run not known yet to make an LLM call: its start record and spans are held here, queued once an
   * LLM span of it arrives, and forgotten if its root span ends without one.
   */
  deferred?: { start: string; bytes: number; held: WireSpan[] };
}

/** Room kept in the buffer for the end record of each started rollout, bytes (an end record is about 150). */
const END_RESERVE_BYTES = 256;

const WARN_INTERVAL_MS = 60_000;

/**
 * The production recorder behind `observe`: rollout starts, spans and ends are queued in memory (a bounded buffer) and
 * exported in the background, in order, in batches (`applyRecords`). It is also the `LightningStore` the rollout
 * context hands to the AGL tracer: it answers `getNextSpanSequenceIds` itself (a counter per rollout) and turns
 * `addSpans` into queued records, so a span costs no store round trip. Only those two store methods are implemented.
 */
export class Recorder {
  readonly #settings: RecorderSettings;
  readonly #buffer = new RecordBuffer();
  readonly #live = new Map<string, LiveRollout>();
  readonly #stats = emptyStats();
  readonly #warnedAt = new Map<string, number>();
  readonly #rejectedTypes = new Set<string>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #pumping: Promise<void> | null = null;
  #backoffMs = 0;
  #wake: (() => void) | null = null;
  /** `flush` calls waiting: the export loop sends at once instead of letting a partial batch fill up. */
  #flushing = 0;
  /** The loop waits for a partial batch to fill (a full one wakes it), as opposed to backing off. */
  #filling = false;
  #closed = false;
  /** {@link halt} was called: the export loop stopped, the request in flight was aborted. */
  #halted = false;
  /** Aborts the request in flight. */
  #inFlight: AbortController | null = null;
  /** Started rollouts whose end is not queued yet: each keeps room for its end record in the buffer. */
  #reservedEnds = 0;
  #firstRecordSeen = false;
  /** The facade given to the tracer as the rollout context's store. */
  readonly store: LightningStore;

  constructor(settings: RecorderSettings) {
    this.#settings = settings;
    const facade = {
      getNextSpanSequenceIds: (owners: ReadonlyArray<readonly [string, string]>) =>
        Promise.resolve(owners.map(([rolloutId, attemptId]) => this.#nextSequenceId(rolloutId, attemptId))),
      addSpans: (spans: SpanInput[]) => Promise.resolve(this.addSpans(spans)),
    };
    this.store = facade as unknown as LightningStore;
  }

  stats(): ObserveStats {
    return { ...this.#stats, buffered: this.#buffer.length, bufferedBytes: this.#buffer.bytes };
  }

  /** Rollouts started and not ended yet (what the recorder tracks per rollout). */
  get openRollouts(): number {
    return this.#live.size;
  }

  /** Counts a request that `sampleRate` left unrecorded. */
  countSampledOut(): void {
    this.#stats.sampledOut += 1;
  }

  /** Counts an LLM call outside any rollout. */
  countUnscoped(): void {
    this.#stats.unscoped += 1;
  }

  /** Counts an LLM call outside any rollout that the rate bound folded into its minute's rollout. */
  countUnscopedFolded(): void {
    this.#stats.unscopedFolded += 1;
  }

  /**
   * Queues a rollout's start. Returns false (the rollout is dropped whole and counted) when the buffer is full.
   */
  start(
    record: {
      rolloutId: string;
      attemptId: string;
      input: JsonValue;
      metadata: JsonObject;
      resourcesId?: string | null;
      startTime: number;
    },
    options: { unscoped?: boolean; rootSpanId?: string; deferred?: boolean } = {},
  ): boolean {
    const redact = this.#settings.redact;
    // The wire record written directly (what `toWire('productionRecord', …)` gives), serialised once.
    const json = JSON.stringify({
      kind: 'start',
      rollout_id: record.rolloutId,
      attempt_id: record.attemptId,
      input: redact ? redact.json(record.input) : record.input,
      metadata: redact ? redact.json(record.metadata) : record.metadata,
      resources_id: record.resourcesId,
      start_time: record.startTime,
    });
    const bytes = recordBytes(json);
    if (options.deferred && !this.#closed) {
      this.#live.set(record.rolloutId, {
        attemptId: record.attemptId,
        nextSequenceId: 1,
        unscoped: true,
        ...(options.rootSpanId ? { rootSpanId: options.rootSpanId } : {}),
        started: false,
        deferred: { start: json, bytes, held: [] },
      });
      return true;
    }
    return this.#admit(record.rolloutId, json, bytes, {
      attemptId: record.attemptId,
      nextSequenceId: 1,
      unscoped: options.unscoped ?? false,
      ...(options.rootSpanId ? { rootSpanId: options.rootSpanId } : {}),
      started: true,
    });
  }

  /** Queues a start record (with room kept for its end) and tracks the rollout; false when the buffer is full. */
  #admit(rolloutId: string, json: string, bytes: number, live: LiveRollout): boolean {
    // The start and, kept aside until it comes, its end: an end record is never refused for want of room.
    if (this.#closed || !this.#fits(2, bytes + END_RESERVE_BYTES)) {
      // Not tracked: a dropped rollout's request runs unrecorded, so none of its spans nor its end come here.
      this.#stats.dropped += 1;
      this.#warn(
        'dropped',
        `[agl observe] the record buffer is full (${this.#buffer.length} records, ${this.#buffer.bytes} bytes; limits ` +
          `maxBufferedRecords=${this.#settings.maxBufferedRecords}, maxBufferedBytes=${this.#settings.maxBufferedBytes}): ` +
          `${this.#stats.dropped} rollout(s) dropped so far (observeStats().dropped). Is the store reachable?`,
      );
      return false;
    }
    this.#live.set(rolloutId, live);
    this.#reservedEnds += 1;
    this.#stats.recorded += 1;
    this.#push(json, bytes);
    return true;
  }

  /**
   * Queues a rollout's end (after every span the tracer handed over so far). The end of a rollout started here always
   * fits: its room was kept when it started.
   */
  end(rolloutId: string, attemptId: string, status: 'succeeded' | 'failed', endTime: number): void {
    const live = this.#live.get(rolloutId);
    this.#live.delete(rolloutId);
    const json = JSON.stringify({
      kind: 'end',
      rollout_id: rolloutId,
      attempt_id: attemptId,
      status,
      end_time: endTime,
    });
    if (live?.started) {
      this.#reservedEnds -= 1;
      this.#push(json);
    } else if (!this.#closed && this.#fits(1, recordBytes(json))) {
      this.#push(json);
    }
  }

  /** The rollouts started and not ended yet (what the exit path ends `failed`). */
  liveRollouts(): Array<{ rolloutId: string; attemptId: string; unscoped: boolean }> {
    const out: Array<{ rolloutId: string; attemptId: string; unscoped: boolean }> = [];
    for (const [rolloutId, live] of this.#live) {
      if (live.started) out.push({ rolloutId, attemptId: live.attemptId, unscoped: live.unscoped });
    }
    return out;
  }

  /**
   * The rollout contexts' `wireSpanSink` (the tracer hands each finished span over, in wire form, on the next turn of
   * the event loop): numbers the spans per rollout in end order, then queues them. They are serialised later, in the
   * export loop, with the rest of their batch.
   */
  readonly wireSpanSink = (spans: WireSpan[]): void => {
    for (const span of spans) span.sequence_id = this.#nextSequenceId(span.rollout_id, span.attempt_id);
    this.#queueSpans(spans);
  };

  /** {@link wireSpanSink} for spans in API form (numbered here too). */
  readonly spanSink = (spans: SpanInput[]): void => {
    for (const span of spans) span.sequenceId = this.#nextSequenceId(span.rolloutId, span.attemptId);
    this.addSpans(spans);
  };

  /** The facade's `addSpans`: redacts, then queues one `spans` record per rollout; returns the spans as redacted. */
  addSpans(spans: SpanInput[]): Span[] {
    return this.#queueSpans(spans.map((span) => toWire('span', span) as WireSpan)).map(
      (span) => fromWire('span', span) as Span,
    );
  }

  /** Redacts, then queues one `spans` record per rollout (wire objects, serialised by the export loop). */
  #queueSpans(spans: WireSpan[]): WireSpan[] {
    const byRollout = new Map<string, WireSpan[]>();
    const accepted: WireSpan[] = [];
    for (const span of spans) {
      const redacted = this.#redact(span);
      const list = byRollout.get(span.rollout_id);
      if (list) list.push(redacted);
      else byRollout.set(span.rollout_id, [redacted]);
      accepted.push(redacted);
    }
    for (const [rolloutId, spansOfRollout] of byRollout) {
      let list = spansOfRollout;
      const deferred = this.#live.get(rolloutId)?.deferred;
      if (deferred) {
        const live = this.#live.get(rolloutId)!;
        deferred.held.push(...list);
        const endsNow = live.rootSpanId !== undefined && list.some((s) => s.span_id === live.rootSpanId);
        if (!deferred.held.some((s) => DEFAULT_LLM_CALL_MATCH.test(s.name))) {
          // No LLM call (yet): nothing of it is recorded unless one comes before its root span ends.
          if (endsNow) this.#live.delete(rolloutId);
          continue;
        }
        delete live.deferred;
        live.started = true;
        this.#live.delete(rolloutId);
        if (!this.#admit(rolloutId, deferred.start, deferred.bytes, live)) continue;
        this.#stats.unscoped += 1;
        list = deferred.held;
      }
      const bytes = estimateSpansBytes(list);
      if (this.#closed || !this.#fits(1, bytes)) {
        this.#stats.droppedSpans += list.length;
        this.#warn(
          'droppedSpans',
          `[agl observe] the record buffer is full: ${this.#stats.droppedSpans} span(s) of recorded rollouts dropped ` +
            `so far (observeStats().droppedSpans). Raise maxBufferedBytes or check the store.`,
        );
      } else {
        this.#push({ kind: 'spans', spans: list }, bytes);
      }
      const live = this.#live.get(rolloutId);
      if (live?.unscoped && (live.rootSpanId === undefined || list.some((s) => s.span_id === live.rootSpanId))) {
        const root = list.find((s) => s.span_id === live.rootSpanId);
        const failed = (root ? [root] : list).some((s) => s.status?.status_code === 'ERROR');
        const endTime = Math.max(...list.map((s) => (typeof s.end_time === 'number' ? s.end_time : 0)));
        this.end(rolloutId, live.attemptId, failed ? 'failed' : 'succeeded', endTime > 0 ? endTime : this.#now());
      }
    }
    return accepted;
  }

  /**
   * Waits until the buffer is empty (everything queued before the call exported or refused), at most `timeoutMs`.
   * Returns true when it emptied in time.
   */
  async flush(timeoutMs = 5_000): Promise<boolean> {
    const deadline = this.#now() + timeoutMs;
    this.#flushing += 1;
    try {
      while (this.#buffer.length > 0) {
        const left = deadline - this.#now();
        if (left <= 0 || this.#halted) return false;
        this.#wake?.();
        const pump = this.#pump();
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([pump, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
      }
      return true;
    } finally {
      this.#flushing -= 1;
    }
  }

  /** Stops taking records (later ones are dropped and counted). */
  close(): void {
    this.#closed = true;
  }

  /**
   * Stops the export loop for good and aborts the request in flight, so nothing of the recorder keeps the process
   * alive (a store that accepts connections and never answers included). What is still buffered stays for
   * {@link exportSync}.
   */
  halt(): void {
    this.#halted = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#inFlight?.abort(new Error('the recorder was halted (process exit deadline)'));
    this.#wake?.();
  }

  /**
   * Hands every buffered record (the batch in flight included: records are idempotent) to `send`, a synchronous
   * sender (the exit path), and empties the buffer when it succeeds. Returns the error message, or `null`.
   */
  exportSync(send: (records: string[]) => string | null): string | null {
    const records = this.#buffer.all();
    if (records.length === 0) return null;
    const error = send(records);
    if (error !== null) {
      this.#stats.failedExports += 1;
      return error;
    }
    this.#buffer.shift(records.length);
    this.#stats.exported += records.length;
    return null;
  }

  #now(): number {
    return (this.#settings.now ?? Date.now)();
  }

  /** True when `records` more records of `bytes` fit beside those queued and the room kept for the open rollouts' ends. */
  #fits(records: number, bytes: number): boolean {
    const s = this.#settings;
    return (
      this.#buffer.length + this.#reservedEnds + records <= s.maxBufferedRecords &&
      this.#buffer.bytes + this.#reservedEnds * END_RESERVE_BYTES + bytes <= s.maxBufferedBytes
    );
  }

  #nextSequenceId(rolloutId: string, attemptId: string): number {
    let live = this.#live.get(rolloutId);
    if (!live) {
      // A span that ended after its rollout did: numbered after anything the rollout could have had.
      live = { attemptId, nextSequenceId: 1_000_000, unscoped: false, started: false };
      this.#live.set(rolloutId, live);
      queueMicrotask(() => {
        if (this.#live.get(rolloutId) === live) this.#live.delete(rolloutId);
      });
    }
    const id = live.nextSequenceId;
    live.nextSequenceId += 1;
    return id;
  }

  #redact(span: WireSpan): WireSpan {
    const redact = this.#settings.redact;
    if (!redact) return span;
    try {
      return redact.span(span);
    } catch (error) {
      this.#warn('redact', `[agl observe] redact threw (${String(error)}); the span's attributes were dropped.`);
      return { ...span, attributes: {} };
    }
  }

  #push(record: string | SpansRecord, bytes?: number): void {
    if (this.#settings.onFirstRecord && !this.#firstRecordSeen) {
      this.#firstRecordSeen = true;
      this.#settings.onFirstRecord();
    }
    this.#buffer.push(record, bytes);
    if (this.#halted) return;
    // A full batch goes out at once, unless the loop is backing off from a failed export (only a flush cuts that short).
    if (this.#buffer.length >= this.#settings.maxBatchRecords) {
      if (this.#filling) this.#wake?.();
      void this.#pump();
    } else if (!this.#timer && !this.#pumping) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        void this.#pump();
      }, this.#settings.flushDelayMs);
      this.#timer.unref?.();
    }
  }

  /** The export loop: one batch at a time, oldest first, with backoff while the store fails. */
  #pump(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#halted) return this.#pumping ?? Promise.resolve();
    this.#pumping ??= this.#run().finally(() => {
      this.#pumping = null;
    });
    return this.#pumping;
  }

  async #run(): Promise<void> {
    const s = this.#settings;
    while (this.#buffer.length > 0 && !this.#halted) {
      const batch = this.#buffer.peek(s.maxBatchRecords, s.maxBatchBytes);
      let result: ApplyRecordsResult;
      const controller = new AbortController();
      this.#inFlight = controller;
      try {
        result = await s.send(batch, controller.signal);
      } catch (error) {
        if (this.#halted) return;
        // While the store is down the queue is kept as wire JSON (a fraction of the memory of its objects).
        this.#buffer.serializeAll();
        this.#stats.failedExports += 1;
        this.#backoffMs = Math.min(s.maxBackoffMs, Math.max(s.minBackoffMs, this.#backoffMs * 2));
        this.#warn(
          'export',
          `[agl observe] could not export ${batch.length} record(s) to the store (${describe(error)}); ` +
            `${this.#buffer.length} record(s) wait in the buffer and are retried (observeStats().failedExports).`,
        );
        await this.#sleep(this.#backoffMs);
        continue;
      } finally {
        this.#inFlight = null;
      }
      this.#backoffMs = 0;
      this.#buffer.shift(batch.length);
      this.#stats.exported += result.applied;
      this.#stats.rejected += result.rejected.length;
      for (const r of result.rejected) {
        if (this.#rejectedTypes.has(r.errorType)) continue;
        this.#rejectedTypes.add(r.errorType);
        s.logger.warn(
          `[agl observe] the store refused a '${r.kind}' record (${r.errorType}: ${r.detail}); ` +
            `further ${r.errorType} refusals are only counted (observeStats().rejected).`,
        );
      }
      // What arrived meanwhile waits for a full batch or the flush delay: one request for many records.
      if (this.#buffer.length > 0 && this.#buffer.length < s.maxBatchRecords && this.#flushing === 0 && !this.#halted) {
        this.#filling = true;
        await this.#sleep(s.flushDelayMs);
        this.#filling = false;
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = () => {
        this.#wake = null;
        done();
      };
    });
  }

  #warn(kind: string, message: string): void {
    const now = this.#now();
    const last = this.#warnedAt.get(kind);
    if (last !== undefined && now - last < WARN_INTERVAL_MS) return;
    this.#warnedAt.set(kind, now);
    this.#settings.logger.warn(message);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
