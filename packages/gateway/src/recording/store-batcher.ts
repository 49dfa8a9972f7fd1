import type { SpanInput } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

const done = (): void => undefined;

type SequencePair = readonly [rolloutId: string, attemptId: string];

/** An answer to write, then its call's span to store (`answerThenStore`). */
interface PendingAnswer {
  answer: () => void;
  span: () => SpanInput;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces the gateway's store traffic. The sequence ids and the spans that calls ask for in the same event-loop turn
 * go to the store together, in one `getNextSpanSequenceIds` and one `addSpans` call (one transaction, or one HTTP
 * request to a remote store), at the end of the turn (`setImmediate`), so batching adds no timer delay. A lone request
 * uses the single-item method, and the span of a call alone in flight (nothing could join its batch) goes to the store
 * at once, without waiting for the turn's end (one call at a time, that wait cost about 45 µs). When a batch fails,
 * its items are retried one at a time, so a bad span (or a store error) fails only the calls it belongs to; span ids
 * are unique, so a retried span is never stored twice.
 *
 * For `spanWrite: 'after-response'` it also orders each answer before its span (`answerThenStore`): answers of calls
 * that finish in the same turn are written together at its end, and their spans then go to the store in one batch.
 */
export class StoreBatcher {
  readonly #store: LightningStore;
  readonly #alone: () => boolean;
  #ids: Pending<SequencePair, number>[] = [];
  #spans: Pending<SpanInput, void>[] = [];
  #answers: PendingAnswer[] = [];
  #scheduled = false;

  /** `alone`: true while a single call is in flight, so nothing can join a batch (its span is then stored at once). */
  constructor(store: LightningStore, alone: () => boolean = () => false) {
    this.#store = store;
    this.#alone = alone;
  }

  /** The next sequence id of a rollout's span (taken from the store at the end of this event-loop turn). */
  nextSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.#ids.push({ item: [rolloutId, attemptId], resolve, reject });
      this.#schedule();
    });
  }

  /** Stores one complete span; resolves once it is in the store. */
  addSpan(span: SpanInput): Promise<void> {
    if (!this.#scheduled && this.#alone()) return this.#store.addSpan(span).then(done);
    return new Promise<void>((resolve, reject) => {
      this.#spans.push({ item: span, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Writes a call's answer (`answer`), then hands its span (`span()`, built only then) to the store, with nothing
   * awaited in between, so the store has the span before anything the client does with the answer can reach it. A
   * call alone in flight does both at once. Otherwise both wait for the end of this event-loop turn, where every
   * answer queued in it is written first and their spans then go to the store together: a client woken once for
   * several answers costs far less CPU than once for each (bench, concurrency 64: 235 against 295 µs per call).
   * Resolves once the span is stored; rejects when it cannot be built or stored (the answer went out regardless).
   */
  answerThenStore(answer: () => void, span: () => SpanInput): Promise<void> {
    if (!this.#scheduled && this.#alone()) {
      try {
        answer();
        return this.#store.addSpan(span()).then(done);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return new Promise<void>((resolve, reject) => {
      this.#answers.push({ answer, span, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const ids = this.#ids;
    const spans = this.#spans;
    const answers = this.#answers;
    this.#ids = [];
    this.#spans = [];
    this.#answers = [];
    if (answers.length > 0) this.#answer(answers, spans);
    if (ids.length > 0) void this.#flushIds(ids);
    if (spans.length > 0) void this.#flushSpans(spans);
  };

  /** Writes every queued answer, then builds their spans into `spans`; a call whose step throws fails alone. */
  #answer(answers: PendingAnswer[], spans: Pending<SpanInput, void>[]): void {
    const answered: PendingAnswer[] = [];
    for (const a of answers) {
      try {
        a.answer();
        answered.push(a);
      } catch (err) {
        a.reject(err);
      }
    }
    for (const a of answered) {
      try {
        spans.push({ item: a.span(), resolve: a.resolve, reject: a.reject });
      } catch (err) {
        a.reject(err);
      }
    }
  }

  async #flushIds(batch: Pending<SequencePair, number>[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const ids = await this.#store.getNextSpanSequenceIds(batch.map((p) => p.item));
        if (ids.length === batch.length) {
          for (let i = 0; i < batch.length; i += 1) batch[i]!.resolve(ids[i]!);
          return;
        }
      } catch {
        // Retried one by one below, so each call gets its own error.
      }
    }
    for (const p of batch) {
      try {
        p.resolve(await this.#store.getNextSpanSequenceId(p.item[0], p.item[1]));
      } catch (err) {
        p.reject(err);
      }
    }
  }

  async #flushSpans(batch: Pending<SpanInput, void>[]): Promise<void> {
    if (batch.length > 1) {
      try {
        await this.#store.addSpans(batch.map((p) => p.item));
        for (const p of batch) p.resolve();
        return;
      } catch {
        // Retried one by one below (duplicates of spans a partial batch did store are skipped by the store).
      }
    }
    for (const p of batch) {
      try {
        await this.#store.addSpan(p.item);
        p.resolve();
      } catch (err) {
        p.reject(err);
      }
    }
  }
}
