import { describe, expect, it } from 'vitest';
import { expectAglError, makeSpan, type Harness } from './harness';

/** Checklist items 21–23 and 30 (store level): filters, and/or logic, sorting and pagination. */
export function queryCases(h: Harness): void {
  describe('queries', () => {
    it('#21 and/or logic; statusIn beats status; rolloutIdIn beats rolloutIds', async () => {
      const f = await h.store.enqueueRollout({ input: 'F' });
      await h.store.updateRollout(f.rolloutId, { status: 'failed' });
      const q = await h.store.enqueueRollout({ input: 'Q' });
      const suffix = q.rolloutId.slice(-6);
      const and = await h.store.queryRollouts({ statusIn: ['failed'], rolloutIdContains: suffix });
      expect(and.items).toEqual([]);
      expect(and.total).toBe(0);
      const or = await h.store.queryRollouts({ statusIn: ['failed'], rolloutIdContains: suffix, filterLogic: 'or' });
      expect(or.items.map((r) => r.rolloutId).sort()).toEqual([f.rolloutId, q.rolloutId].sort());
      const preferred = await h.store.queryRollouts({ statusIn: ['queuing'], status: ['failed'] });
      expect(preferred.items.map((r) => r.rolloutId)).toEqual([q.rolloutId]);
      const ids = await h.store.queryRollouts({ rolloutIdIn: [f.rolloutId], rolloutIds: [q.rolloutId] });
      expect(ids.items.map((r) => r.rolloutId)).toEqual([f.rolloutId]);
      const deprecated = await h.store.queryRollouts({ status: ['failed'] });
      expect(deprecated.items.map((r) => r.rolloutId)).toEqual([f.rolloutId]);
      const modes = await h.store.queryRollouts({ modeIn: ['val'] });
      expect(modes.total).toBe(0);
    });

    it('queryRollouts attaches the latest attempt only to rollouts that have one', async () => {
      const queued = await h.store.enqueueRollout({ input: 1 });
      const started = await h.store.startRollout({ input: 2 });
      const { items } = await h.store.queryRollouts();
      expect(items.map((r) => r.rolloutId)).toEqual([queued.rolloutId, started.rolloutId]);
      expect('attempt' in items[0]!).toBe(false);
      expect(items[1]).toMatchObject({ attempt: { attemptId: started.attempt.attemptId } });
    });

    it('#22 pagination: total counts every match; offset past the end and limit 0 give no items', async () => {
      const made = await h.store.enqueueRollouts(Array.from({ length: 5 }, (_, i) => ({ input: i })));
      const page = await h.store.queryRollouts({ limit: 2, offset: 1 });
      expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 });
      expect(page.items.map((r) => r.rolloutId)).toEqual(made.slice(1, 3).map((r) => r.rolloutId));
      expect(await h.store.queryRollouts({ limit: 2, offset: 10 })).toEqual({
        items: [],
        total: 5,
        limit: 2,
        offset: 10,
      });
      expect(await h.store.queryRollouts({ limit: 0 })).toEqual({ items: [], total: 5, limit: 0, offset: 0 });
      expect((await h.store.queryRollouts()).limit).toBe(-1);
      expect((await h.store.queryRollouts({ limit: -1, offset: 4 })).items).toHaveLength(1);
    });

    it('sorting accepts camelCase and snake_case; an unknown sort field is a ValidationError', async () => {
      const a = await h.store.enqueueRollout({ input: 'a' });
      h.clock.advance(1);
      const b = await h.store.enqueueRollout({ input: 'b' });
      const desc = await h.store.queryRollouts({ sortBy: 'startTime', sortOrder: 'desc' });
      expect(desc.items.map((r) => r.rolloutId)).toEqual([b.rolloutId, a.rolloutId]);
      const snake = await h.store.queryRollouts({ sortBy: 'start_time', sortOrder: 'desc' });
      expect(snake.items.map((r) => r.rolloutId)).toEqual([b.rolloutId, a.rolloutId]);
      const byId = await h.store.queryRollouts({ sortBy: 'rollout_id' });
      expect(byId.items.map((r) => r.rolloutId)).toEqual([a.rolloutId, b.rolloutId].sort());
      await expectAglError(
        h.store.queryRollouts({ sortBy: 'nonexistent_field' }),
        'AGL_ValidationError',
        /nonexistent_field/,
      );
      await expectAglError(h.store.queryWorkers({ sortBy: 'bogus' }), 'AGL_ValidationError');
      await expectAglError(h.store.queryAttempts({ rolloutId: a.rolloutId, sortBy: 'bogus' }), 'AGL_ValidationError');
      await expectAglError(h.store.querySpans({ rolloutId: a.rolloutId, sortBy: 'bogus' }), 'AGL_ValidationError');
      await expectAglError(h.store.queryResources({ sortBy: 'bogus' }), 'AGL_ValidationError');
    });

    it('#23 querySpans always ANDs the rollout/attempt scope, even with or-logic', async () => {
      const one = await h.store.startRollout({ input: 1 });
      const two = await h.store.startRollout({ input: 2 });
      await h.store.addSpan(makeSpan(one.rolloutId, one.attempt.attemptId, { name: 'alpha' }));
      await h.store.addSpan(makeSpan(one.rolloutId, one.attempt.attemptId, { name: 'gamma' }));
      const beta = await h.store.addSpan(makeSpan(two.rolloutId, two.attempt.attemptId, { name: 'beta' }));
      const result = await h.store.querySpans({
        rolloutId: one.rolloutId,
        attemptId: one.attempt.attemptId,
        nameContains: 'alpha',
        traceId: beta!.traceId,
        filterLogic: 'or',
      });
      expect(result.items.map((s) => s.name)).toEqual(['alpha']);
      const and = await h.store.querySpans({ rolloutId: one.rolloutId, nameContains: 'alpha', traceId: beta!.traceId });
      expect(and.total).toBe(0);
      expect((await h.store.querySpans({ rolloutId: one.rolloutId, name: 'gamma' })).total).toBe(1);
    });

    it('quirk 1 fixed: or-logic with no optional filters returns every span of the scope', async () => {
      const r = await h.store.startRollout({ input: 1 });
      await h.store.addSpans([makeSpan(r.rolloutId, r.attempt.attemptId), makeSpan(r.rolloutId, r.attempt.attemptId)]);
      expect((await h.store.querySpans({ rolloutId: r.rolloutId, filterLogic: 'or' })).total).toBe(2);
      expect((await h.store.queryRollouts({ filterLogic: 'or' })).total).toBe(1);
    });

    it('#23 attemptId "latest" resolves to the latest attempt, and to nothing without attempts', async () => {
      const queued = await h.store.enqueueRollout({ input: 1 });
      expect(await h.store.querySpans({ rolloutId: queued.rolloutId, attemptId: 'latest' })).toMatchObject({
        items: [],
        total: 0,
      });
      const claimed = await h.store.dequeueRollout();
      await h.store.addSpan(makeSpan(queued.rolloutId, claimed!.attempt.attemptId, { name: 'old' }));
      const second = await h.store.startAttempt(queued.rolloutId);
      await h.store.addSpan(makeSpan(queued.rolloutId, second.attempt.attemptId, { name: 'new' }));
      const latest = await h.store.querySpans({ rolloutId: queued.rolloutId, attemptId: 'latest' });
      expect(latest.items.map((s) => s.name)).toEqual(['new']);
      const all = await h.store.querySpans({ rolloutId: queued.rolloutId, attemptId: null });
      expect(all.items.map((s) => s.name)).toEqual(['old', 'new']);
      const first = await h.store.querySpans({ rolloutId: queued.rolloutId, attemptId: claimed!.attempt.attemptId });
      expect(first.items.map((s) => s.name)).toEqual(['old']);
    });

    it('unknown ids in lookups give null or an empty page (quirk 6 kept)', async () => {
      expect(await h.store.getRolloutById('ro-missing')).toBeNull();
      expect(await h.store.getLatestAttempt('ro-missing')).toBeNull();
      expect(await h.store.getResourcesById('rs-missing')).toBeNull();
      expect(await h.store.getWorkerById('nobody')).toBeNull();
      expect(await h.store.queryAttempts({ rolloutId: 'ro-missing' })).toMatchObject({ items: [], total: 0 });
      expect(await h.store.querySpans({ rolloutId: 'ro-missing' })).toMatchObject({ items: [], total: 0 });
      expect(await h.store.getLatestResources()).toBeNull();
    });
  });
}
