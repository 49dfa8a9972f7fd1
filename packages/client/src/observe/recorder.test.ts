import { describe, expect, it } from 'vitest';
import { Recorder, type RecorderSettings } from './recorder';

function recorder(send: RecorderSettings['send']): Recorder {
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
  });
}

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
});
