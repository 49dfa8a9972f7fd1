import { describe, expect, it } from 'vitest';
import { expectAglError, makeSpan, type Harness } from './harness';
import type { StoreConformanceOptions } from './types';

/** Parallel callers, statistics and close. */
export function concurrencyCases(h: Harness, options: StoreConformanceOptions): void {
  const dequeuers = options.parallelDequeuers ?? 100;

  describe('concurrency and lifecycle of the store', () => {
    it(`${dequeuers} parallel dequeuers get each rollout exactly once`, async () => {
      const made = await h.store.enqueueRollouts(Array.from({ length: dequeuers }, (_, i) => ({ input: i })));
      const claims = await Promise.all(
        Array.from({ length: dequeuers + 10 }, (_, i) => h.store.dequeueRollout({ workerId: `w-${i % 7}` })),
      );
      const ids = claims.flatMap((c) => (c ? [c.rolloutId] : []));
      expect(ids).toHaveLength(dequeuers);
      expect(new Set(ids)).toEqual(new Set(made.map((r) => r.rolloutId)));
      expect(claims.filter((c) => c === null)).toHaveLength(10);
      expect((await h.store.statistics()).totalAttempts).toBe(dequeuers);
    });

    it('parallel sequence id requests never hand out the same id twice', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const ids = await Promise.all(
        Array.from({ length: 50 }, () => h.store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId)),
      );
      expect(new Set(ids).size).toBe(50);
      expect(Math.max(...ids)).toBe(50);
    });

    it('parallel span writers all land', async () => {
      const r = await h.store.startRollout({ input: 1 });
      await Promise.all(
        Array.from({ length: 20 }, () =>
          h.store.addSpans([makeSpan(r.rolloutId, r.attempt.attemptId), makeSpan(r.rolloutId, r.attempt.attemptId)]),
        ),
      );
      expect((await h.store.querySpans({ rolloutId: r.rolloutId })).total).toBe(40);
    });

    it('statistics count everything', async () => {
      await h.store.addResources({ p: { resourceType: 'prompt_template', template: 't' } });
      const r = await h.store.startRollout({ input: 1, workerId: 'w' });
      await h.store.enqueueRollout({ input: 2 });
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      h.clock.advance(3);
      const stats = await h.store.statistics();
      expect(stats).toMatchObject({
        totalRollouts: 2,
        totalAttempts: 1,
        totalSpans: 1,
        totalResources: 1,
        totalWorkers: 1,
      });
      expect(typeof stats.name).toBe('string');
      expect(stats.uptime).toBeGreaterThanOrEqual(0);
    });

    it('calls after close() throw StoreClosedError', async () => {
      await h.store.enqueueRollout({ input: 1 });
      await h.store.close();
      await expectAglError(h.store.enqueueRollout({ input: 2 }), 'AGL_StoreClosedError');
      await expectAglError(h.store.queryRollouts(), 'AGL_StoreClosedError');
      await expectAglError(h.store.addSpans([]), 'AGL_StoreClosedError');
      await h.store.close();
    });
  });
}
