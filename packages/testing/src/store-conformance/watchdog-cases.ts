import { describe, expect, it } from 'vitest';
import type { AttemptStatus, RolloutConfigInput } from '@agl/core/schema';
import { expectWorkerReleased, makeSpan, type Harness } from './harness';
import type { StoreConformanceOptions } from './types';

/** Checklist items 12–14 and 28: the watchdog, driven by the fake clock. */
export function watchdogCases(h: Harness, options: StoreConformanceOptions): void {
  describe('watchdog', () => {
    it('#12 an attempt past timeoutSeconds becomes timeout and the rollout is requeued', async () => {
      const r = await h.store.startRollout({
        input: 1,
        config: { timeoutSeconds: 0.1, maxAttempts: 2, retryCondition: ['timeout'] },
      });
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      h.clock.advance(0.15);
      const rollout = await h.store.getRolloutById(r.rolloutId);
      expect(rollout?.status).toBe('requeuing');
      const attempts = await h.store.queryAttempts({ rolloutId: r.rolloutId });
      expect(attempts.items.map((a) => a.status)).toEqual(['timeout']);
      expect(attempts.items[0]?.endTime).toBeNull();
      const retry = await h.store.dequeueRollout();
      expect(retry).toMatchObject({ rolloutId: r.rolloutId, attempt: { sequenceId: 2 } });
    });

    // Just before its limit the attempt keeps its status (after a heartbeat span when `spanAt` is set); just after it,
    // the watchdog's verdict stands and, with no retry for it, the rollout fails.
    it.each<{
      name: string;
      config: RolloutConfigInput;
      spanAt: number | null;
      before: number;
      kept: AttemptStatus;
      after: number;
      verdict: AttemptStatus;
    }>([
      {
        name: '#12 no timeout before the limit',
        config: { timeoutSeconds: 10 },
        spanAt: null,
        before: 9.9,
        kept: 'preparing',
        after: 0.2,
        verdict: 'timeout',
      },
      {
        name: '#13 silence past unresponsiveSeconds after a heartbeat marks the attempt unresponsive; no retry → failed',
        config: { unresponsiveSeconds: 0.2, retryCondition: ['timeout'] },
        spanAt: 0.1,
        before: 0.15,
        kept: 'running',
        after: 0.1,
        verdict: 'unresponsive',
      },
    ])('$name', async ({ config, spanAt, before, kept, after, verdict }) => {
      const r = await h.store.startRollout({ input: 1, config });
      if (spanAt !== null) {
        h.clock.advance(spanAt);
        await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      }
      h.clock.advance(before);
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe(kept);
      h.clock.advance(after);
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe(verdict);
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('failed');
    });

    it('#13 an attempt that never sent a span is unresponsive after unresponsiveSeconds from its start', async () => {
      const r = await h.store.startRollout({ input: 1, config: { unresponsiveSeconds: 1 } });
      h.clock.advance(1.5);
      await h.store.queryRollouts();
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('unresponsive');
    });

    it('#14 the watchdog marks the worker unknown when its attempt goes unresponsive', async () => {
      await h.store.updateWorker('w', { heartbeatStats: { cpu: 0.1 } });
      const r = await h.store.startRollout({ input: 1, workerId: 'w', config: { unresponsiveSeconds: 1 } });
      expect((await h.store.getWorkerById('w'))?.status).toBe('busy');
      h.clock.advance(5);
      const rollout = await h.store.getRolloutById(r.rolloutId);
      expect(rollout && 'attempt' in rollout && rollout.attempt.status).toBe('unresponsive');
      await expectWorkerReleased(h, 'w', 'unknown', { cpu: 0.1 });
    });

    it('the watchdog leaves finished rollouts alone', async () => {
      const r = await h.store.startRollout({ input: 1, config: { timeoutSeconds: 1 } });
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      h.clock.advance(10);
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('succeeded');
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('succeeded');
    });

    it('the watchdog does not run before addSpan: a late span still counts before the next scan', async () => {
      const r = await h.store.startRollout({ input: 1, config: { unresponsiveSeconds: 1 } });
      h.clock.advance(5);
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('running');
    });

    // A backend whose servers each keep their own debounce window (several PostgreSQL store servers) has no such cases.
    if (options.configurableDebounce !== false)
      describe('debounce', () => {
        it('#28 scans at most once per scanDebounceSeconds window', async () => {
          await h.restart({ scanDebounceSeconds: 5, start: 200 });
          const r = await h.store.startRollout({ input: 1, config: { timeoutSeconds: 1 } }); // first scan at t=200
          h.clock.advance(2); // t=202: refused
          expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('preparing');
          h.clock.advance(2); // t=204: still refused
          expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('preparing');
          h.clock.advance(1); // t=205: allowed
          expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('timeout');
        });

        it('#28 concurrent callers in one window produce a single scan', async () => {
          await h.restart({ scanDebounceSeconds: 5, start: 200 });
          const r = await h.store.startRollout({ input: 1, config: { timeoutSeconds: 1 } });
          h.clock.advance(4);
          await Promise.all(Array.from({ length: 10 }, () => h.store.queryRollouts()));
          expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('preparing');
        });

        it('#28 a debounce of 0 scans on every call', async () => {
          await h.restart({ scanDebounceSeconds: 0, start: 200 });
          const r = await h.store.startRollout({ input: 1, config: { timeoutSeconds: 1 } });
          h.clock.advance(1.01);
          expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('timeout');
        });
      });
  });
}
