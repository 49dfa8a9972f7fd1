import { describe, expect, it } from 'vitest';
import { expectAglError, makeSpan, snapshot, type Harness } from './harness';

/** Checklist item 20 plus bad input: typed errors, and nothing changes when a call fails. */
export function errorCases(h: Harness): void {
  describe('errors leave the store unchanged', () => {
    it('#20 unknown rollout or attempt on a write is a NotFoundError', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const queued = await h.store.enqueueRollout({ input: 2 });
      const before = await snapshot(h.store, [r.rolloutId, queued.rolloutId]);
      await expectAglError(
        h.store.addSpan(makeSpan('ro-missing', r.attempt.attemptId)),
        'AGL_NotFoundError',
        /Rollout ro-missing not found/,
      );
      await expectAglError(
        h.store.addSpan(makeSpan(r.rolloutId, 'at-missing')),
        'AGL_NotFoundError',
        /Attempt at-missing not found/,
      );
      await expectAglError(
        h.store.updateRollout('ro-missing', { status: 'failed' }),
        'AGL_NotFoundError',
        /ro-missing/,
      );
      await expectAglError(
        h.store.updateAttempt('ro-missing', 'latest', { status: 'failed' }),
        'AGL_NotFoundError',
        /Rollout ro-missing not found/,
      );
      await expectAglError(
        h.store.updateAttempt(queued.rolloutId, 'latest', { status: 'failed' }),
        'AGL_NotFoundError',
        /No attempts found/,
      );
      await expectAglError(
        h.store.updateAttempt(r.rolloutId, 'at-missing', { status: 'failed' }),
        'AGL_NotFoundError',
        /Attempt at-missing not found/,
      );
      await expectAglError(h.store.startAttempt('ro-missing'), 'AGL_NotFoundError', /Rollout ro-missing not found/);
      expect(await snapshot(h.store, [r.rolloutId, queued.rolloutId])).toEqual(before);
    });

    it('a batch of spans with one bad owner stores none of them', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const before = await snapshot(h.store, [r.rolloutId]);
      const good = makeSpan(r.rolloutId, r.attempt.attemptId, { sequenceId: 50 });
      await expectAglError(h.store.addSpans([good, makeSpan(r.rolloutId, 'at-missing')]), 'AGL_NotFoundError');
      await expectAglError(
        h.store.addSpans([good, { ...makeSpan(r.rolloutId, r.attempt.attemptId), sequenceId: 'x' as never }]),
        'AGL_ValidationError',
      );
      expect(await snapshot(h.store, [r.rolloutId])).toEqual(before);
      expect((await h.store.getLatestAttempt(r.rolloutId))?.status).toBe('preparing');
      expect(await h.store.getNextSpanSequenceId(r.rolloutId, r.attempt.attemptId)).toBe(1);
    });

    it('a span batch over several rollouts reads them in id order: the first unknown id in that order is named', async () => {
      // Every backend reads (and, on PostgreSQL, locks) a batch's rollouts sorted by id, so two batches over the same
      // rollouts cannot deadlock; the error is the same everywhere.
      const r = await h.store.startRollout({ input: 1 });
      const before = await snapshot(h.store, [r.rolloutId]);
      const spans = ['ro-zz-missing', r.rolloutId, 'ro-aa-missing'].map((id) => makeSpan(id, r.attempt.attemptId));
      await expectAglError(h.store.addSpans(spans), 'AGL_NotFoundError', /Rollout ro-aa-missing not found/);
      expect(await snapshot(h.store, [r.rolloutId])).toEqual(before);
    });

    it('wrong types and unknown enum values are ValidationErrors', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const before = await snapshot(h.store, [r.rolloutId]);
      const bad: Array<[string, () => Promise<unknown>]> = [
        ['enqueue without input', () => h.store.enqueueRollout({} as never)],
        ['enqueue bad mode', () => h.store.enqueueRollout({ input: 1, mode: 'training' as never })],
        ['enqueue bad config', () => h.store.enqueueRollout({ input: 1, config: { maxAttempts: 0 } })],
        [
          'enqueue bad retry condition',
          () => h.store.enqueueRollout({ input: 1, config: { retryCondition: ['exploded' as never] } }),
        ],
        ['batch with one bad item', () => h.store.enqueueRollouts([{ input: 1 }, { input: 2, mode: 'x' as never }])],
        ['update unknown status', () => h.store.updateRollout(r.rolloutId, { status: 'done' as never })],
        ['update null status', () => h.store.updateRollout(r.rolloutId, { status: null as never })],
        ['update unknown field', () => h.store.updateRollout(r.rolloutId, { bogus: 1 } as never)],
        [
          'attempt unknown status',
          () => h.store.updateAttempt(r.rolloutId, 'latest', { status: 'cancelled' as never }),
        ],
        ['attempt null worker', () => h.store.updateAttempt(r.rolloutId, 'latest', { workerId: null as never })],
        ['span without ids', () => h.store.addSpan({ name: 'x' } as never)],
        [
          'span wrong attribute type',
          () =>
            h.store.addSpan(makeSpan(r.rolloutId, r.attempt.attemptId, { attributes: { a: { nested: 1 } } as never })),
        ],
        ['resources bad type', () => h.store.addResources({ x: { resourceType: 'gpu' } } as never)],
        ['query bad status', () => h.store.queryRollouts({ statusIn: ['nope' as never] })],
        ['query bad limit', () => h.store.queryRollouts({ limit: -5 })],
        ['query bad offset', () => h.store.queryRollouts({ offset: -1 })],
        ['query bad logic', () => h.store.queryRollouts({ filterLogic: 'xor' as never })],
        ['sequence id bad id', () => h.store.getNextSpanSequenceId(42 as never, 'a')],
        ['dequeue bad limit', () => h.store.dequeueRollouts({ limit: 1.5 })],
        ['wait bad ids', () => h.store.waitForRollouts('ro-x' as never, { timeoutSeconds: 0 })],
      ];
      for (const [label, call] of bad) {
        const error = await expectAglError(call(), 'AGL_ValidationError').catch((e: unknown) => {
          throw new Error(`${label}: ${String(e)}`);
        });
        expect(error.message.length, label).toBeGreaterThan(10);
      }
      expect(await snapshot(h.store, [r.rolloutId])).toEqual(before);
    });

    it('illegal status transitions are InvalidTransitionErrors that name both states', async () => {
      const r = await h.store.startRollout({ input: 1 });
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      const before = await snapshot(h.store, [r.rolloutId]);
      const e1 = await expectAglError(
        h.store.updateRollout(r.rolloutId, { status: 'preparing' }),
        'AGL_InvalidTransitionError',
      );
      expect(e1.message).toMatch(/succeeded/);
      expect(e1.message).toMatch(/preparing/);
      await expectAglError(h.store.updateRollout(r.rolloutId, { status: 'running' }), 'AGL_InvalidTransitionError');
      await expectAglError(
        h.store.updateAttempt(r.rolloutId, 'latest', { status: 'running' }),
        'AGL_InvalidTransitionError',
        /succeeded/,
      );
      await expectAglError(h.store.startAttempt(r.rolloutId), 'AGL_InvalidTransitionError');
      expect(await snapshot(h.store, [r.rolloutId])).toEqual(before);
      // An explicit re-queue of a finished rollout is allowed and gives a new attempt.
      await h.store.updateRollout(r.rolloutId, { status: 'requeuing' });
      expect((await h.store.dequeueRollout())?.attempt.sequenceId).toBe(2);
    });
  });
}
