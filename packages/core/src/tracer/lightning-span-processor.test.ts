import { afterEach, describe, expect, it, vi } from 'vitest';
import { emitMessage, emitReward } from './emitters';
import { withRolloutContext } from './rollout-context';
import { newTracer, RecordingStore, shutdownTracers } from './__fixtures__/recording-store';

afterEach(shutdownTracers);

// How the span processor exports a rollout's spans to its store: batches, drops, failures, flushes, numbering.
describe('LightningSpanProcessor export', () => {
  it('exports in batches of maxExportBatchSize', async () => {
    const store = new RecordingStore();
    const tracer = newTracer({ maxExportBatchSize: 3 });
    withRolloutContext({ rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer }, () => {
      for (let i = 0; i < 7; i += 1) emitMessage(`m${i}`);
    });
    await tracer.forceFlush();
    expect(store.batches.map((b) => b.length)).toEqual([3, 3, 1]);
    expect(store.spans.map((s) => s.attributes['agentlightning.message.body'])).toEqual([
      'm0',
      'm1',
      'm2',
      'm3',
      'm4',
      'm5',
      'm6',
    ]);
  });

  it('drops, counts and reports spans beyond maxQueueSize', async () => {
    const store = new RecordingStore();
    const warn = vi.fn();
    const onDrop = vi.fn();
    const tracer = newTracer({ maxQueueSize: 3, maxExportBatchSize: 100, logger: { warn }, onDrop });
    withRolloutContext({ rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer }, () => {
      for (let i = 0; i < 5; i += 1) emitMessage(`m${i}`);
    });
    expect(tracer.stats()).toMatchObject({ queued: 3, dropped: 2 });
    expect(onDrop).toHaveBeenCalledTimes(2);
    expect(onDrop).toHaveBeenLastCalledWith({
      rolloutId: 'ro-1',
      attemptId: 'at-1',
      spanName: 'agentlightning.message',
      droppedTotal: 2,
    });
    await tracer.forceFlush();
    expect(store.spans).toHaveLength(3);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/dropped 2 span\(s\).*maxQueueSize=3/));
  });

  it("a store error for one rollout does not lose the other rollouts' spans", async () => {
    const store = new RecordingStore();
    store.failRollout = 'ro-bad';
    const warn = vi.fn();
    const tracer = newTracer({ logger: { warn } });
    for (const id of ['ro-good', 'ro-bad', 'ro-good2']) {
      withRolloutContext({ rolloutId: id, attemptId: 'at', store: store.asStore(), tracer }, () => emitReward(1));
    }
    await tracer.forceFlush();
    expect(store.spans.map((s) => s.rolloutId).sort()).toEqual(['ro-good', 'ro-good2']);
    expect(tracer.stats()).toMatchObject({ exported: 2, failed: 1 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('Rollout ro-bad not found'));
  });

  it("forceFlush waits for a slow store to the end, past OpenTelemetry's flush timeout", async () => {
    const store = new RecordingStore();
    const slow = store.addSpans.bind(store);
    store.addSpans = async (spans) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return slow(spans);
    };
    const tracer = newTracer();
    // The provider's own flush would give up after this long (the default is 30 s).
    (tracer.provider as unknown as { _forceFlushTimeoutMillis: number })._forceFlushTimeoutMillis = 50;
    withRolloutContext({ rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer }, () => emitReward(1));
    await tracer.forceFlush();
    expect(store.spans.map((s) => s.name)).toEqual(['agentlightning.annotation']);
  });

  it('lets flushes that arrive during an export share the next one, and overlaps deliveries up to maxConcurrentExports', async () => {
    const store = new RecordingStore();
    const deliver = store.addSpans.bind(store);
    let inFlight = 0;
    let peak = 0;
    let numberCalls = 0;
    const number = store.getNextSpanSequenceIds.bind(store);
    store.getNextSpanSequenceIds = async (pairs) => {
      numberCalls += 1;
      return number(pairs);
    };
    store.addSpans = async (spans) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 40));
      inFlight -= 1;
      return deliver(spans);
    };
    const tracer = newTracer({ maxExportBatchSize: 2, maxConcurrentExports: 3 });
    const ctx = (i: number) => ({ rolloutId: `ro-${i}`, attemptId: 'at-1', store: store.asStore(), tracer });
    withRolloutContext(ctx(0), () => emitReward(0));
    const first = tracer.forceFlush();
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Ten rollouts end while the first export is on its way, each flushing (as the runner does at every attempt's end).
    const flushes = Array.from({ length: 10 }, (_, i) => {
      withRolloutContext(ctx(i + 1), () => emitReward(i + 1));
      return tracer.forceFlush();
    });
    await Promise.all([first, ...flushes]);
    expect(store.spans.map((s) => s.rolloutId).sort()).toEqual(Array.from({ length: 11 }, (_, i) => `ro-${i}`).sort());
    // Eleven flushes, three exports: the first span alone, then a window of 3 × 2 numbered while the first delivers,
    // then the last four once a delivery frees room. One export per flush would have made eleven numbering requests.
    expect(numberCalls).toBe(3);
    expect(store.batches.every((b) => b.length <= 2)).toBe(true);
    expect(peak).toBe(3);
  });

  it('numbers the next window while the last one is delivered, never holding more than two windows', async () => {
    const store = new RecordingStore();
    const deliver = store.addSpans.bind(store);
    const number = store.getNextSpanSequenceIds.bind(store);
    let inFlight = 0;
    let peak = 0;
    let numbered = 0;
    let delivered = 0;
    let maxHeld = 0;
    const inFlightWhenNumbering: number[] = [];
    let open: (() => void) | null = null;
    const gate = new Promise<void>((resolve) => (open = resolve));
    store.getNextSpanSequenceIds = async (pairs) => {
      inFlightWhenNumbering.push(inFlight);
      numbered += pairs.length;
      maxHeld = Math.max(maxHeld, numbered - delivered);
      return number(pairs);
    };
    store.addSpans = async (spans) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await gate;
      inFlight -= 1;
      delivered += spans.length;
      return deliver(spans);
    };
    const until = async (condition: () => boolean): Promise<void> => {
      for (let turns = 0; !condition(); turns += 1) {
        if (turns > 10_000) throw new Error(`stuck at ${numbered} spans numbered, ${inFlight} deliveries in flight`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    // Window: 2 deliveries of 2 spans.
    const tracer = newTracer({ maxExportBatchSize: 2, maxConcurrentExports: 2 });
    const emit = (i: number): Promise<void> => {
      withRolloutContext({ rolloutId: `ro-${i}`, attemptId: 'at-1', store: store.asStore(), tracer }, () =>
        emitReward(i),
      );
      return tracer.forceFlush();
    };
    const flushes = [emit(0)];
    await until(() => inFlight === 1);
    flushes.push(emit(1));
    await until(() => inFlight === 2);
    for (let i = 2; i < 16; i += 1) flushes.push(emit(i));
    // Both slots are busy, yet the next window gets its sequence ids (an export that waited for a free slot would not).
    await until(() => numbered === 6);
    expect(inFlightWhenNumbering.at(-1)).toBe(2);
    open!();
    await Promise.all(flushes);
    expect(store.spans).toHaveLength(16);
    expect(peak).toBe(2);
    expect(maxHeld).toBeLessThanOrEqual(8);
  });

  it('goes on exporting after a numbering request fails (those spans are counted as failed)', async () => {
    const store = new RecordingStore();
    const number = store.getNextSpanSequenceIds.bind(store);
    let calls = 0;
    store.getNextSpanSequenceIds = async (pairs) => {
      calls += 1;
      if (calls === 1) throw new Error('store unavailable');
      return number(pairs);
    };
    const warn = vi.fn();
    const tracer = newTracer({ maxExportBatchSize: 1, maxConcurrentExports: 1, logger: { warn } });
    for (let round = 0; round < 3; round += 1) {
      withRolloutContext({ rolloutId: `ro-${round}`, attemptId: 'at-1', store: store.asStore(), tracer }, () =>
        emitReward(round),
      );
      await tracer.forceFlush();
    }
    expect(store.spans.map((s) => s.rolloutId)).toEqual(['ro-1', 'ro-2']);
    expect(tracer.stats()).toMatchObject({ exported: 2, failed: 1, queued: 0 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('store unavailable'));
  });

  it('numbers spans in end order although their deliveries overlap', async () => {
    const store = new RecordingStore();
    const deliver = store.addSpans.bind(store);
    let calls = 0;
    store.addSpans = async (spans) => {
      // Earlier batches take longer, so later ones land first.
      const delay = 60 - 20 * calls;
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, delay)));
      return deliver(spans);
    };
    const tracer = newTracer({ maxExportBatchSize: 1, maxConcurrentExports: 3 });
    withRolloutContext({ rolloutId: 'ro-1', attemptId: 'at-1', store: store.asStore(), tracer }, () => {
      for (let i = 0; i < 3; i += 1) emitReward(i);
    });
    await tracer.forceFlush();
    const landed = store.spans.map((s) => [s.sequenceId, s.attributes['agentlightning.reward.0.value']]);
    expect(landed.map(([, value]) => value)).toEqual([2, 1, 0]);
    expect([...landed].sort((a, b) => Number(a[0]) - Number(b[0])).map(([, value]) => value)).toEqual([0, 1, 2]);
  });

  it("reports accepted spans to the context's onSpans callback", async () => {
    const store = new RecordingStore();
    const tracer = newTracer();
    const seen: string[] = [];
    withRolloutContext(
      {
        rolloutId: 'ro-1',
        attemptId: 'at-1',
        store: store.asStore(),
        tracer,
        onSpans: (spans) => seen.push(...spans.map((s) => s.name)),
      },
      () => emitMessage('x'),
    );
    await tracer.forceFlush();
    expect(seen).toEqual(['agentlightning.message']);
  });
});
