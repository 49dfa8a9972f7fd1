import { describe, expect, it } from 'vitest';
import type { WireSpan } from '@agl/core/tracer';
import { recordBytes } from './record-buffer';
import { Recorder, type RecorderSettings } from './recorder';

function recorder(send: RecorderSettings['send'], settings: Partial<RecorderSettings> = {}): Recorder {
  return new Recorder({
    send,
    maxBufferedRecords: 100_000,
    maxBufferedBytes: 64 * 1024 * 1024,
    maxBatchRecords: 50,
    maxBatchBytes: 1024 * 1024,
    flushDelayMs: 5,
    minBackoffMs: 100,
    maxBackoffMs: 400,
    redact: null,
    logger: { warn: () => undefined },
    ...settings,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A store that applies everything, noting each batch's size. */
const applyAll =
  (sizes: number[]): RecorderSettings['send'] =>
  async (records) => {
    sizes.push(records.length);
    return { applied: records.length, rejected: [] };
  };

const start = (i: number) => ({
  rolloutId: `ro-${i}`,
  attemptId: `at-${i}`,
  input: i,
  metadata: {},
  startTime: 1_700_000_000 + i,
});

describe('Recorder export loop', () => {
  it('backs off exponentially (capped) while the store fails, however many records arrive, then drains in order', async () => {
    const calls: number[] = [];
    let down = true;
    const applied: string[] = [];
    const rec = recorder(async (records) => {
      calls.push(performance.now());
      if (down) throw new Error('connect ECONNREFUSED');
      for (const json of records) {
        const r = JSON.parse(json) as { kind: string; rollout_id?: string };
        applied.push(r.kind === 'start' ? r.rollout_id! : r.kind);
      }
      return { applied: records.length, rejected: [] };
    });
    const t0 = performance.now();
    for (let i = 0; i < 2_000; i += 1) {
      rec.start(start(i));
      if (i % 100 === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    while (performance.now() - t0 < 1_200) await new Promise((resolve) => setTimeout(resolve, 50));
    // 100 + 200 + 400 + 400 ... ms between tries: a handful in 1.2 s, not one per arriving batch
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(6);
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(90);
    expect(Math.max(...gaps)).toBeLessThan(1_000);
    expect(rec.stats().failedExports).toBe(calls.length);
    down = false;
    expect(await rec.flush(5_000)).toBe(true);
    expect(applied).toEqual(Array.from({ length: 2_000 }, (_, i) => `ro-${i}`));
    expect(rec.stats()).toMatchObject({ exported: 2_000, buffered: 0, dropped: 0 });
  });

  it('sends what trickles in as full batches or once per flush delay, not one request per record', async () => {
    const batches: number[] = [];
    const rec = recorder(applyAll(batches), { flushDelayMs: 40, maxBatchRecords: 1_000 });
    const t0 = performance.now();
    for (let i = 0; i < 200; i += 1) {
      rec.start(start(i));
      await sleep(1);
    }
    const elapsed = performance.now() - t0;
    expect(await rec.flush(5_000)).toBe(true);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(200);
    // 200 records over `elapsed` ms (at least 200; more on a busy machine), sent at most about once per 40 ms (two per
    // window: the flush delay, then what arrived while the batch was out) and by the final flush.
    expect(batches.length).toBeLessThanOrEqual(Math.ceil(elapsed / 40) * 2 + 2);
    expect(Math.max(...batches)).toBeGreaterThan(5);
  });

  it('a full batch goes out without waiting for the flush delay, and flush sends a partial one at once', async () => {
    const sent: number[] = [];
    const rec = recorder(applyAll(sent), { flushDelayMs: 60_000, maxBatchRecords: 10 });
    for (let i = 0; i < 25; i += 1) rec.start(start(i));
    await sleep(20);
    expect(sent).toEqual([10, 10]);
    expect(await rec.flush(1_000)).toBe(true);
    expect(sent).toEqual([10, 10, 5]);
  });

  it('keeps nothing of a rollout it dropped (a long outage does not grow its memory)', async () => {
    const rec = recorder(
      async () => {
        throw new Error('connect ECONNREFUSED');
      },
      // Room for three rollouts: each start, and its end kept aside.
      { maxBufferedRecords: 6, minBackoffMs: 60_000, maxBackoffMs: 60_000 },
    );
    for (let i = 0; i < 1_000; i += 1) rec.start(start(i));
    expect(rec.stats()).toMatchObject({ recorded: 3, dropped: 997, buffered: 3 });
    expect(rec.openRollouts).toBe(3);
    for (let i = 0; i < 3; i += 1) rec.end(`ro-${i}`, `at-${i}`, 'succeeded', 1_700_000_100);
    expect(rec.openRollouts).toBe(0);
    expect(rec.stats().buffered, 'the ends fit in the room kept for them').toBe(6);
    rec.close();
  });
});

describe('Recorder bounds and exit (issue 55)', () => {
  it('the byte bound counts what V8 holds: a record with a character beyond Latin-1 costs two bytes a character', () => {
    const rec = recorder(async () => new Promise(() => undefined), { maxBufferedBytes: 1_000_000 });
    rec.start({ ...start(1), input: 'a'.repeat(10_000) });
    const ascii = rec.stats().bufferedBytes;
    rec.start({ ...start(2), input: 'a'.repeat(9_999) + '€' });
    const wide = rec.stats().bufferedBytes - ascii;
    expect(ascii).toBeGreaterThan(10_000);
    expect(wide).toBeGreaterThan(2 * 10_000);
    expect(wide).toBeLessThan(2 * ascii + 64);
    rec.halt();
  });

  it('end records count: a full buffer still takes the end of every rollout it started, and no more', () => {
    const rec = recorder(async () => new Promise(() => undefined), { maxBufferedRecords: 10 });
    const started = Array.from({ length: 20 }, (_, i) => rec.start(start(i))).filter(Boolean).length;
    expect(started).toBe(5);
    for (let i = 0; i < 5; i += 1) {
      rec.addSpans([
        { rolloutId: `ro-${i}`, attemptId: `at-${i}`, sequenceId: 1, name: 'late', attributes: {} } as never,
      ]);
    }
    expect(rec.stats().droppedSpans, 'no room for spans: what is left is kept for the ends').toBe(5);
    for (let i = 0; i < 5; i += 1) rec.end(`ro-${i}`, `at-${i}`, 'succeeded', 1_700_000_100);
    expect(rec.stats().buffered).toBe(10);
    rec.halt();
  });

  it('halt aborts the request in flight and stops the loop; exportSync hands over what is left', async () => {
    let aborted = false;
    const rec = recorder(
      (_records, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
      { flushDelayMs: 1 },
    );
    rec.start(start(1));
    expect(await rec.flush(30)).toBe(false);
    rec.halt();
    expect(aborted).toBe(true);
    expect(await rec.flush(1_000), 'a halted recorder does not wait').toBe(false);
    const sent: string[][] = [];
    expect(rec.exportSync((records) => (sent.push(records), null))).toBeNull();
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]![0]!)).toMatchObject({ kind: 'start', rollout_id: 'ro-1' });
    expect(rec.stats()).toMatchObject({ buffered: 0, bufferedBytes: 0 });
  });
});

describe('Recorder spans in wire form (issue 56)', () => {
  /** A span as the tracer hands it to `wireSpanSink`: wire form, sequence 0. */
  const wireSpan = (rolloutId: string, content: string): WireSpan => ({
    rollout_id: rolloutId,
    attempt_id: 'at-1',
    sequence_id: 0,
    trace_id: 'a'.repeat(32),
    span_id: 'b'.repeat(16),
    parent_id: null,
    name: 'openai.chat.completion',
    status: { status_code: 'OK', description: null },
    attributes: { 'gen_ai.prompt.0.role': 'user', 'gen_ai.prompt.0.content': content },
    events: [],
    links: [],
    start_time: 1_700_000_000,
    end_time: 1_700_000_001,
    context: { trace_id: 'a'.repeat(32), span_id: 'b'.repeat(16), is_remote: false, trace_state: {} },
    parent: null,
    resource: { attributes: { 'service.name': 'svc' }, schema_url: '' },
  });

  it('numbers them and serialises each spans record once, in the export loop; the byte bound counts an estimate until then', async () => {
    let down = true;
    const sent: string[] = [];
    const rec = recorder(
      async (records) => {
        if (down) throw new Error('connect ECONNREFUSED');
        sent.push(...records);
        return { applied: records.length, rejected: [] };
      },
      { flushDelayMs: 1, minBackoffMs: 20, maxBackoffMs: 20 },
    );
    rec.start({ ...start(1), input: null });
    const startBytes = rec.stats().bufferedBytes;
    // A record with a character beyond Latin-1 costs two bytes a character, in the estimate too.
    rec.wireSpanSink([wireSpan('ro-1', 'é'.repeat(20_000))]);
    const estimated = rec.stats().bufferedBytes - startBytes;
    while (rec.stats().failedExports === 0) await sleep(5);
    // A failed export leaves the whole queue as wire JSON, counted exactly.
    const exact = rec.stats().bufferedBytes - startBytes;
    down = false;
    expect(await rec.flush(5_000)).toBe(true);
    const spans = sent.find((json) => json.includes('"kind":"spans"'))!;
    expect(exact).toBe(recordBytes(spans));
    expect(estimated).toBeGreaterThan(exact * 0.9);
    expect(estimated).toBeLessThan(exact * 1.2);
    expect(JSON.parse(spans)).toEqual({
      kind: 'spans',
      spans: [{ ...wireSpan('ro-1', 'é'.repeat(20_000)), sequence_id: 1 }],
    });
    expect(sent.map((json) => (JSON.parse(json) as { kind: string }).kind)).toEqual(['start', 'spans']);
    expect(rec.stats()).toMatchObject({ buffered: 0, bufferedBytes: 0, exported: 2 });
  });
});
