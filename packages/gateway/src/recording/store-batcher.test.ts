import type { Span, SpanInput } from '@agl/core/schema';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it } from 'vitest';
import { callSpan, newSpanId } from './call-span';
import { StoreBatcher } from './store-batcher';

/** A real memory store that counts its span and sequence-id calls, and refuses spans named "bad". */
class CountingStore extends MemoryStore {
  calls: string[] = [];

  override async addSpan(span: SpanInput): Promise<Span | null> {
    this.calls.push('addSpan');
    if (span.name === 'bad') throw new Error('bad span');
    return super.addSpan(span);
  }

  override async addSpans(spans: SpanInput[]): Promise<Span[]> {
    this.calls.push(`addSpans(${spans.length})`);
    if (spans.some((s) => s.name === 'bad')) throw new Error('bad span in batch');
    return super.addSpans(spans);
  }

  override async getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    this.calls.push('getNextSpanSequenceId');
    return super.getNextSpanSequenceId(rolloutId, attemptId);
  }

  override async getNextSpanSequenceIds(pairs: ReadonlyArray<readonly [string, string]>): Promise<number[]> {
    this.calls.push(`getNextSpanSequenceIds(${pairs.length})`);
    return super.getNextSpanSequenceIds(pairs);
  }
}

/** A one-second call span on the rollout's attempt. */
const spanOf = (
  r: { rolloutId: string; attempt: { attemptId: string } },
  name: string,
  sequenceId: number,
  attributes: SpanInput['attributes'] = {},
): SpanInput =>
  callSpan({
    rolloutId: r.rolloutId,
    attemptId: r.attempt.attemptId,
    sequenceId,
    spanId: newSpanId(),
    name,
    attributes,
    startTime: 1,
    endTime: 2,
    parent: null,
  });

describe('StoreBatcher', () => {
  let store: CountingStore;
  afterEach(() => store.close());

  async function setup(): Promise<{
    batcher: StoreBatcher;
    span: (name: string, sequenceId: number) => SpanInput;
    rolloutId: string;
  }> {
    store = new CountingStore();
    const r = await store.startRollout({ input: null, mode: 'train' });
    const span = (name: string, sequenceId: number): SpanInput => spanOf(r, name, sequenceId, { n: name });
    return { batcher: new StoreBatcher(store), span, rolloutId: r.rolloutId };
  }

  it('takes the sequence ids and stores the spans asked for in one event-loop turn with one store call each, in order', async () => {
    const { batcher, span, rolloutId } = await setup();
    const [rid, aid] = [rolloutId, (await store.getLatestAttempt(rolloutId))!.attemptId];
    store.calls = [];
    const ids = await Promise.all([
      batcher.nextSequenceId(rid, aid),
      batcher.nextSequenceId(rid, aid),
      batcher.nextSequenceId(rid, aid),
    ]);
    expect(ids).toEqual([1, 2, 3]);
    await Promise.all(ids.map((id) => batcher.addSpan(span(`call ${id}`, id))));
    expect(store.calls).toEqual(['getNextSpanSequenceIds(3)', 'addSpans(3)']);
    const stored = await store.querySpans({ rolloutId, sortBy: 'sequence_id' });
    expect(stored.items.map((s) => [s.sequenceId, s.name])).toEqual([
      [1, 'call 1'],
      [2, 'call 2'],
      [3, 'call 3'],
    ]);
    // A lone request uses the single-item methods.
    expect(await batcher.nextSequenceId(rid, aid)).toBe(4);
    await batcher.addSpan(span('alone', 4));
    expect(store.calls.slice(2)).toEqual(['getNextSpanSequenceId', 'addSpan']);
  });

  it('stores the span of a call alone in flight at once, and batches again as soon as calls overlap', async () => {
    store = new CountingStore();
    const r = await store.startRollout({ input: null, mode: 'train' });
    let inFlight = 1;
    const batcher = new StoreBatcher(store, () => inFlight <= 1);
    const span = (name: string, sequenceId: number): SpanInput => spanOf(r, name, sequenceId);
    const alone = batcher.addSpan(span('alone', 1));
    expect(store.calls).toEqual(['addSpan']); // handed to the store before the turn ends
    await alone;
    inFlight = 2;
    store.calls = [];
    const both = Promise.all([batcher.addSpan(span('first', 2)), batcher.addSpan(span('second', 3))]);
    expect(store.calls).toEqual([]);
    await both;
    expect(store.calls).toEqual(['addSpans(2)']);
    expect(
      (await store.querySpans({ rolloutId: r.rolloutId, sortBy: 'sequence_id' })).items.map((s) => s.name),
    ).toEqual(['alone', 'first', 'second']);
  });

  it('retries a failed batch one span at a time, so only the bad span’s call fails and the others are stored once', async () => {
    const { batcher, span, rolloutId } = await setup();
    store.calls = [];
    const results = await Promise.allSettled([
      batcher.addSpan(span('good 1', 1)),
      batcher.addSpan(span('bad', 2)),
      batcher.addSpan(span('good 2', 3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'bad span' });
    expect(store.calls).toEqual(['addSpans(3)', 'addSpan', 'addSpan', 'addSpan']);
    const stored = await store.querySpans({ rolloutId, sortBy: 'sequence_id' });
    expect(stored.items.map((s) => s.name)).toEqual(['good 1', 'good 2']);
  });

  it('answerThenStore: writes each answer before building and storing its span; overlapping calls answer together at the turn’s end', async () => {
    store = new CountingStore();
    const r = await store.startRollout({ input: null, mode: 'train' });
    let inFlight = 1;
    const batcher = new StoreBatcher(store, () => inFlight <= 1);
    const events: string[] = [];
    const call = (name: string, sequenceId: number): Promise<void> =>
      batcher.answerThenStore(
        () => {
          events.push(`answer ${name}`);
          if (name === 'unwritable') throw new Error('socket gone');
        },
        () => {
          events.push(`span ${name}`);
          if (name === 'unparsable') throw new Error('bad answer');
          return spanOf(r, name, sequenceId);
        },
      );
    const alone = call('alone', 1);
    expect(events).toEqual(['answer alone', 'span alone']);
    expect(store.calls).toEqual(['addSpan']); // at once, in the same turn
    await alone;
    inFlight = 3;
    events.length = 0;
    store.calls = [];
    const results = Promise.allSettled([
      call('a', 2),
      call('unparsable', 3),
      call('bad', 4),
      call('unwritable', 5),
      call('b', 6),
    ]);
    expect(events).toEqual([]); // nothing before the end of the turn
    const settled = await results;
    expect(events).toEqual([
      'answer a',
      'answer unparsable',
      'answer bad',
      'answer unwritable',
      'answer b',
      'span a',
      'span unparsable',
      'span bad',
      'span b',
    ]);
    expect(settled.map((x) => (x.status === 'rejected' ? (x.reason as Error).message : 'stored'))).toEqual([
      'stored',
      'bad answer',
      'bad span',
      'socket gone',
      'stored',
    ]);
    expect(store.calls).toEqual(['addSpans(3)', 'addSpan', 'addSpan', 'addSpan']);
    expect(
      (await store.querySpans({ rolloutId: r.rolloutId, sortBy: 'sequence_id' })).items.map((s) => s.name),
    ).toEqual(['alone', 'a', 'b']);
  });

  it('passes a store error to every waiting call', async () => {
    const { batcher, span, rolloutId } = await setup();
    const attemptId = (await store.getLatestAttempt(rolloutId))!.attemptId;
    await store.close();
    const results = await Promise.allSettled([
      batcher.nextSequenceId(rolloutId, attemptId),
      batcher.nextSequenceId(rolloutId, attemptId),
      batcher.addSpan(span('late', 1)),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).name : 'ok'))).toEqual([
      'AGL_StoreClosedError',
      'AGL_StoreClosedError',
      'AGL_StoreClosedError',
    ]);
  });
});
