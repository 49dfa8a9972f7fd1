import { describe, expect, it } from 'vitest';
import { FakeClock } from '@agl/testing';
import { MemoryStore } from '../index';

const span = (rolloutId: string, attemptId: string, spanId: string) => ({
  rolloutId,
  attemptId,
  sequenceId: 1,
  traceId: 't',
  spanId,
  parentId: null,
  name: 'x',
  startTime: 1,
  endTime: 2,
});

describe('MemoryStore span eviction (checklist #29)', () => {
  it('evicts whole rollouts, oldest first, once the estimate passes the threshold', async () => {
    const clock = new FakeClock();
    // AGL's case: capacity 100 B, eviction 0.5 (50 B), safe 0.05 (5 B), 20 B spans.
    const store = new MemoryStore({
      clock,
      eviction: { evictionThresholdBytes: 50, safeThresholdBytes: 5, spanSizeEstimator: () => 20 },
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      clock.advance(1);
      const r = await store.startRollout({ input: i });
      ids.push(r.rolloutId);
      await store.addSpan(span(r.rolloutId, r.attempt.attemptId, `s${i}`));
    }
    // After the 3rd span (60 B > 50 B) rollouts 0-2 are evicted down to 0 B; the 4th span brings it back to 20 B.
    for (const id of ids.slice(0, 3)) {
      await expect(store.querySpans({ rolloutId: id })).rejects.toMatchObject({
        name: 'AGL_NotFoundError',
        message: expect.stringMatching(/evicted/),
      });
    }
    expect((await store.querySpans({ rolloutId: ids[3]! })).items.map((s) => s.spanId)).toEqual(['s3']);
    const stats = await store.statistics();
    expect(stats).toMatchObject({
      totalSpans: 1,
      totalSpanBytes: 20,
      totalRollouts: 4,
      evictionThresholdBytes: 50,
      safeThresholdBytes: 5,
    });
    await store.close();
  });

  it('refuses a safe threshold that is not below the eviction threshold', () => {
    expect(() => new MemoryStore({ eviction: { evictionThresholdBytes: 10, safeThresholdBytes: 10 } })).toThrow(
      /must be below/,
    );
  });

  it('keeps every span when eviction is off (the default)', async () => {
    const store = new MemoryStore({ clock: new FakeClock() });
    const r = await store.startRollout({ input: 1 });
    await store.addSpans(Array.from({ length: 200 }, (_, i) => span(r.rolloutId, r.attempt.attemptId, `s${i}`)));
    expect((await store.querySpans({ rolloutId: r.rolloutId })).total).toBe(200);
    await store.close();
  });
});
