import { describe, expect, it } from 'vitest';
import type { ProgressSnapshot } from '@agl/trainer';
import { createProgressDisplay, formatProgress } from './progress-display';

const snap = (over: Partial<ProgressSnapshot>): ProgressSnapshot => ({
  queuing: 0,
  running: 0,
  succeeded: 0,
  failed: 0,
  cancelled: 0,
  total: 10,
  meanReward: null,
  rate: 0,
  elapsedSeconds: 0,
  ...over,
});

describe('progress display', () => {
  it('formats done/failed counts, mean reward and rate', () => {
    expect(
      formatProgress(
        snap({ succeeded: 6, failed: 1, running: 2, queuing: 1, meanReward: 0.5, rate: 3.5, elapsedSeconds: 2 }),
      ),
    ).toBe('rollouts 7/10 done (6 ok, 1 failed), 2 running, 1 queued · mean reward 0.500 · 3.5/s · 2.0s');
    expect(formatProgress(snap({}))).toContain('mean reward n/a');
  });

  it('prints plain lines, only on change, when the stream is not a TTY', async () => {
    const lines: string[] = [];
    const stream = { isTTY: false, write: (s: string) => lines.push(s) } as unknown as NodeJS.WriteStream;
    const display = createProgressDisplay({ stream, plainIntervalSeconds: 0, title: 't' });
    display.update(snap({ succeeded: 1 }));
    display.update(snap({ succeeded: 1 }));
    display.update(snap({ succeeded: 2 }));
    await display.finish(snap({ succeeded: 10, meanReward: 1 }));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\[t\] rollouts 1\/10 done/u);
    expect(lines[2]).toMatch(/^\[t\] rollouts 10\/10 done .*mean reward 1\.000/u);
  });

  it('uses listr2 on a TTY (no plain lines on the given stream) and ends cleanly', async () => {
    const chunks: string[] = [];
    const stream = {
      isTTY: true,
      columns: 120,
      write: (s: string) => (chunks.push(s), true),
    } as unknown as NodeJS.WriteStream;
    const saved = process.env.CI;
    delete process.env.CI;
    try {
      const display = createProgressDisplay({ stream, title: 'tty' });
      display.update(snap({ succeeded: 3 }));
      await display.finish(snap({ succeeded: 10 }));
    } finally {
      if (saved !== undefined) process.env.CI = saved;
    }
    expect(chunks).toEqual([]);
  });
});
