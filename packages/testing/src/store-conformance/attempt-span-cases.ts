import { describe, expect, it } from 'vitest';
import { SPAN_ANNOTATION } from '@agl/core/semconv';
import { expectAglError, makeSpan, type Harness } from './harness';
import type { StoreConformanceOptions } from './types';

/**
 * What summaries of many rollouts rely on: attempts numbered 1..n (the latest attempt's sequence id is the attempt
 * count), and `querySpansOfAttempts`, the spans of many attempts in one call (skipped with
 * `querySpansOfAttempts: false`).
 */
export function attemptSpanCases(h: Harness, options: StoreConformanceOptions = {}): void {
  describe('attempt numbering and spans of many attempts', () => {
    it("a rollout's attempts are numbered 1, 2, 3 by sequenceId; the latest's is the attempt count", async () => {
      const r = await h.store.enqueueRollout({ input: 1, config: { maxAttempts: 3, retryCondition: ['failed'] } });
      const started: Array<number | undefined> = [];
      for (const start of ['retry', 'manual', 'retry'] as const) {
        const next = start === 'retry' ? await h.store.dequeueRollout() : await h.store.startAttempt(r.rolloutId);
        started.push(next?.attempt.sequenceId);
        await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'failed' });
      }
      expect(started).toEqual([1, 2, 3]);
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('failed');
      const attempts = await h.store.queryAttempts({ rolloutId: r.rolloutId });
      expect(attempts.items.map((a) => a.sequenceId)).toEqual([1, 2, 3]);
      const [listed] = (await h.store.queryRollouts({ rolloutIdIn: [r.rolloutId] })).items;
      expect(listed && 'attempt' in listed ? listed.attempt.sequenceId : null).toBe(attempts.total);
    });

    it.skipIf(options.querySpansOfAttempts === false)(
      'querySpansOfAttempts: the named spans of each attempt asked, in sequence order; unknown ids get []',
      async () => {
        const store = h.store;
        expect(store.querySpansOfAttempts, 'the store implements querySpansOfAttempts').toBeTypeOf('function');
        if (!store.querySpansOfAttempts) return;
        const a = await store.startRollout({ input: 'a' });
        const a2 = await store.startAttempt(a.rolloutId);
        const b = await store.startRollout({ input: 'b' });
        const c = await store.startRollout({ input: 'c' });
        const annotation = (rolloutId: string, attemptId: string, spanId: string, sequenceId: number) =>
          makeSpan(rolloutId, attemptId, { name: SPAN_ANNOTATION, spanId, sequenceId, attributes: { v: spanId } });
        await store.addSpans([
          annotation(a.rolloutId, a.attempt.attemptId, 'a1-reward', 1), // an older attempt: not asked for
          annotation(a.rolloutId, a2.attempt.attemptId, 'a2-late', 7),
          makeSpan(a.rolloutId, a2.attempt.attemptId, { spanId: 'a2-llm', sequenceId: 2 }), // another name
          annotation(a.rolloutId, a2.attempt.attemptId, 'a2-early', 3),
          annotation(b.rolloutId, b.attempt.attemptId, 'b-reward', 1),
          makeSpan(c.rolloutId, c.attempt.attemptId, { spanId: 'c-llm' }),
        ]);
        const lists = await store.querySpansOfAttempts(
          [
            { rolloutId: b.rolloutId, attemptId: b.attempt.attemptId },
            { rolloutId: a.rolloutId, attemptId: a2.attempt.attemptId },
            { rolloutId: 'ro-unknown', attemptId: 'at-unknown' },
            { rolloutId: c.rolloutId, attemptId: c.attempt.attemptId },
            { rolloutId: a.rolloutId, attemptId: 'at-unknown' },
            { rolloutId: b.rolloutId, attemptId: b.attempt.attemptId },
          ],
          { name: SPAN_ANNOTATION },
        );
        expect(lists.map((spans) => spans.map((s) => s.spanId))).toEqual([
          ['b-reward'],
          ['a2-early', 'a2-late'],
          [],
          [],
          [],
          ['b-reward'],
        ]);
        const [early] = lists[1]!;
        expect(early).toMatchObject({ rolloutId: a.rolloutId, attemptId: a2.attempt.attemptId, sequenceId: 3 });
        expect(early?.attributes).toEqual({ v: 'a2-early' });
        // The same lists as one querySpans per attempt.
        const one = await store.querySpans({
          rolloutId: a.rolloutId,
          attemptId: a2.attempt.attemptId,
          name: SPAN_ANNOTATION,
          sortBy: 'sequenceId',
        });
        expect(lists[1]!.map((s) => [s.spanId, s.sequenceId, s.attributes])).toEqual(
          one.items.map((s) => [s.spanId, s.sequenceId, s.attributes]),
        );
        expect(await store.querySpansOfAttempts([], { name: SPAN_ANNOTATION })).toEqual([]);
        await expectAglError(
          store.querySpansOfAttempts([{ rolloutId: '', attemptId: 'x' }], { name: SPAN_ANNOTATION }),
          'AGL_ValidationError',
        );
      },
    );
  });
}
