import { describe, expect, it } from 'vitest';
import { makeSpan, type Harness } from './harness';

/** Checklist items 7, 8 and 15–19: spans as heartbeats, revival, sequence ids, duplicates. */
export function spanCases(h: Harness): void {
  describe('spans and heartbeats', () => {
    it('#7 a span moves a preparing attempt and its rollout to running and records the heartbeat', async () => {
      const r = await h.store.startRollout({ input: 1 });
      h.clock.advance(2);
      const stored = await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      expect(stored).toMatchObject({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, name: 'test-span' });
      const attempt = await h.store.getLatestAttempt(r.rolloutId);
      expect(attempt).toMatchObject({ status: 'running', lastHeartbeatTime: h.clock.now() });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('running');
    });

    it('#7 a span revives an unresponsive attempt', async () => {
      const r = await h.store.startRollout({ input: 1 });
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'unresponsive' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('failed');
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('running');
    });

    it('#8 a span on a timed-out attempt only moves its heartbeat; the rollout is unchanged', async () => {
      const r = await h.store.startRollout({ input: 1, config: { maxAttempts: 2, retryCondition: ['timeout'] } });
      await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'timeout' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('requeuing');
      h.clock.advance(1);
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      const attempt = await h.store.getLatestAttempt(r.rolloutId);
      expect(attempt).toMatchObject({ status: 'timeout', lastHeartbeatTime: h.clock.now(), endTime: null });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('requeuing');
    });

    it('a span does not move a queuing rollout (quirk 2, first half kept)', async () => {
      const r = await h.store.enqueueRollout({ input: 1 });
      const claimed = await h.store.dequeueRollout();
      await h.store.updateRollout(r.rolloutId, { status: 'queuing' });
      await h.store.addSpan(makeSpan(r.rolloutId, claimed!.attempt.attemptId));
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('queuing');
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('running');
    });

    it('#15 an unresponsive attempt that speaks before its retry revives the rollout; the queue entry is dropped', async () => {
      const config = { unresponsiveSeconds: 1, maxAttempts: 2, retryCondition: ['unresponsive' as const] };
      const r = await h.store.startRollout({ input: 1, config });
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'unresponsive' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('requeuing');
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('running');
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('running');
      expect(await h.store.dequeueRollout()).toBeNull();
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('succeeded');
      expect((await h.store.queryAttempts({ rolloutId: r.rolloutId })).total).toBe(1);
    });

    it('#16 after the retry was dequeued, a span from the old attempt revives only that attempt', async () => {
      const config = { maxAttempts: 2, retryCondition: ['unresponsive' as const] };
      const r = await h.store.startRollout({ input: 1, config });
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'unresponsive' });
      const retry = await h.store.dequeueRollout();
      expect(retry?.attempt.sequenceId).toBe(2);
      await h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId));
      const attempts = (await h.store.queryAttempts({ rolloutId: r.rolloutId })).items;
      expect(attempts.map((a) => a.status)).toEqual(['running', 'preparing']);
      expect((await h.store.getLatestAttempt(r.rolloutId))?.sequenceId).toBe(2);
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('preparing');
    });

    it('#17 sequence ids are per rollout, shared by attempts, unchecked, and raised by explicit ids', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const a1 = r.attempt.attemptId;
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, a1)).toBe(1);
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, a1)).toBe(2);
      const a2 = (await h.store.startAttempt(r.rolloutId)).attempt.attemptId;
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, a2)).toBe(3);
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, 'at-unknown')).toBe(4);
      expect(await h.store.getNextSpanSequenceId('ro-nonexistent', 'at-x')).toBe(1);
      await h.store.addSpan(makeSpan(r.rolloutId, a2, { sequenceId: 100 }));
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, a1)).toBe(101);
      await h.store.addSpan(makeSpan(r.rolloutId, a2, { sequenceId: 5 }));
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, a1)).toBe(102);
    });

    it('#18 bulk sequence ids are allocated in input order', async () => {
      const a = await h.store.startRollout({ input: 'A' });
      const b = await h.store.startRollout({ input: 'B' });
      const ids = await h.store.getNextSpanSequenceIds([
        [a.rolloutId, a.attempt.attemptId],
        [b.rolloutId, b.attempt.attemptId],
        [a.rolloutId, 'at-other'],
        [a.rolloutId, a.attempt.attemptId],
      ]);
      expect(ids).toEqual([1, 1, 2, 3]);
      expect(await h.store.getNextSpanSequenceId(a.rolloutId, a.attempt.attemptId)).toBe(4);
      expect(await h.store.getNextSpanSequenceId(b.rolloutId, b.attempt.attemptId)).toBe(2);
      // Counters already past 1, rollouts interleaved: each continues from its own value, in input order.
      const again = await h.store.getNextSpanSequenceIds([
        [b.rolloutId, b.attempt.attemptId],
        [a.rolloutId, a.attempt.attemptId],
        [b.rolloutId, b.attempt.attemptId],
        [a.rolloutId, a.attempt.attemptId],
      ]);
      expect(again).toEqual([3, 5, 4, 6]);
      expect(await h.store.getNextSpanSequenceIds([])).toEqual([]);
    });

    it('#19 a duplicate span id is ignored (null), not an error; addSpans returns only what was inserted', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const span = makeSpan(r.rolloutId, r.attempt.attemptId, { name: 'first' });
      expect(await h.store.addSpan(span)).not.toBeNull();
      expect(await h.store.addSpan({ ...span, name: 'second' })).toBeNull();
      const fresh = makeSpan(r.rolloutId, r.attempt.attemptId);
      const inserted = await h.store.addSpans([span, fresh, { ...fresh }]);
      expect(inserted.map((s) => s.spanId)).toEqual([fresh.spanId]);
      const all = await h.store.querySpans({ rolloutId: r.rolloutId });
      expect(all.items.map((s) => s.name)).toEqual(['first', 'test-span']);
      expect((await h.store.statistics()).totalSpans).toBe(2);
      // The same span id under another attempt is a different span.
      const other = await h.store.startAttempt(r.rolloutId);
      expect(await h.store.addSpan({ ...span, attemptId: other.attempt.attemptId })).not.toBeNull();
    });

    it('spans keep every field, unknown keys included, and come back ordered by sequence id', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const at = r.attempt.attemptId;
      const rich = makeSpan(r.rolloutId, at, {
        sequenceId: 2,
        parentId: 'p1',
        status: { statusCode: 'ERROR', description: 'boom' },
        attributes: { 'gen_ai.prompt.0.content': 'hi', 'x.list': [1, 2], flag: true },
        events: [{ name: 'exception', attributes: { 'exception.message': 'bad' }, timestamp: 1_700_000_003 }],
        resource: { attributes: { 'service.name': 'svc' }, schemaUrl: '' },
        kind: 'SpanKind.CLIENT',
      } as Record<string, unknown>);
      await h.store.addSpans([rich, makeSpan(r.rolloutId, at, { sequenceId: 1, name: 'early' })]);
      const { items } = await h.store.querySpans({ rolloutId: r.rolloutId });
      expect(items.map((s) => s.sequenceId)).toEqual([1, 2]);
      expect(items[1]).toMatchObject({ ...rich, kind: 'SpanKind.CLIENT' });
      const desc = await h.store.querySpans({ rolloutId: r.rolloutId, sortBy: 'sequence_id', sortOrder: 'desc' });
      expect(desc.items.map((s) => s.sequenceId)).toEqual([2, 1]);
    });

    it('a stored span shares nothing with the caller: later edits of the input or of the returned span never reach the store', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const ids = [1, 2, 3];
      const attributes: Record<string, unknown> = { response_token_ids: ids, note: 'kept' };
      const [returned] = await h.store.addSpans([
        makeSpan(r.rolloutId, r.attempt.attemptId, { attributes: attributes as never }),
      ]);
      ids.push(4);
      attributes.note = 'changed';
      (returned!.attributes.response_token_ids as number[]).push(5);
      returned!.attributes.extra = 'x';
      const [read] = (await h.store.querySpans({ rolloutId: r.rolloutId })).items;
      expect(read!.attributes).toEqual({ response_token_ids: [1, 2, 3], note: 'kept' });
      (read!.attributes.response_token_ids as number[]).push(6);
      expect((await h.store.querySpans({ rolloutId: r.rolloutId })).items[0]!.attributes).toEqual({
        response_token_ids: [1, 2, 3],
        note: 'kept',
      });
    });
  });
}
