import { isAttemptedRollout, type AttemptedRollout } from '@agl/core/schema';
import { describe, expect, it } from 'vitest';
import type { Harness } from './harness';

const LLM = { resourceType: 'llm', endpoint: 'http://127.0.0.1:1/v1', model: 'm' } as const;

/** Checklist items 1–6 and 9–11: enqueue, start, FIFO dequeue, retries and status propagation. */
export function lifecycleCases(h: Harness): void {
  describe('rollout lifecycle', () => {
    it('#1 enqueueRollout creates a queuing rollout with defaults and the latest resources id', async () => {
      const bare = await h.store.enqueueRollout({ input: { q: 1 } });
      expect(bare).toMatchObject({
        status: 'queuing',
        input: { q: 1 },
        metadata: {},
        resourcesId: null,
        mode: null,
        endTime: null,
      });
      expect(bare.rolloutId).toMatch(/^ro-[0-9a-f]{12}$/);
      expect(bare.startTime).toBe(h.clock.now());
      expect(bare.config).toEqual({
        timeoutSeconds: null,
        unresponsiveSeconds: null,
        maxAttempts: 1,
        retryCondition: [],
      });
      expect('attempt' in bare).toBe(false);
      expect((await h.store.queryAttempts({ rolloutId: bare.rolloutId })).total).toBe(0);
      const res = await h.store.addResources({ main: LLM });
      const withRes = await h.store.enqueueRollout({ input: null, mode: 'train', metadata: { task_id: 't1' } });
      expect(withRes).toMatchObject({
        input: null,
        mode: 'train',
        resourcesId: res.resourcesId,
        metadata: { task_id: 't1' },
      });
      const fetched = await h.store.getRolloutById(withRes.rolloutId);
      expect(fetched).toEqual(withRes);
    });

    it('#2 startRollout creates a preparing rollout with attempt #1 and stores the config', async () => {
      const config = {
        timeoutSeconds: 30,
        unresponsiveSeconds: 5,
        maxAttempts: 3,
        retryCondition: ['failed' as const],
      };
      const started = await h.store.startRollout({ input: 'x', config });
      expect(started.status).toBe('preparing');
      expect(started.config).toEqual(config);
      expect(started.attempt).toMatchObject({
        sequenceId: 1,
        status: 'preparing',
        rolloutId: started.rolloutId,
        endTime: null,
      });
      expect(started.attempt.attemptId).toMatch(/^at-[0-9a-f]{8}$/);
      const fetched = await h.store.getRolloutById(started.rolloutId);
      expect(fetched && isAttemptedRollout(fetched)).toBe(true);
      expect((fetched as AttemptedRollout).attempt).toEqual(started.attempt);
      expect(await h.store.dequeueRollout()).toBeNull();
    });

    it('#3 dequeue is FIFO; each claimed rollout is preparing with a new attempt; then null', async () => {
      const r1 = await h.store.enqueueRollout({ input: 1 });
      const r2 = await h.store.enqueueRollout({ input: 2 });
      const r3 = await h.store.enqueueRollout({ input: 3 });
      const got = [await h.store.dequeueRollout(), await h.store.dequeueRollout(), await h.store.dequeueRollout()];
      expect(got.map((r) => r?.rolloutId)).toEqual([r1.rolloutId, r2.rolloutId, r3.rolloutId]);
      for (const r of got)
        expect(r).toMatchObject({ status: 'preparing', attempt: { sequenceId: 1, status: 'preparing' } });
      expect(await h.store.dequeueRollout()).toBeNull();
      expect((await h.store.getRolloutById(r2.rolloutId))?.status).toBe('preparing');
    });

    it('#4 dequeue skips ids whose rollout left the queue by an update', async () => {
      const r1 = await h.store.enqueueRollout({ input: 1 });
      const r2 = await h.store.enqueueRollout({ input: 2 });
      const r3 = await h.store.enqueueRollout({ input: 3 });
      await h.store.updateRollout(r1.rolloutId, { status: 'succeeded' });
      await h.store.updateRollout(r2.rolloutId, { status: 'failed' });
      expect((await h.store.dequeueRollout())?.rolloutId).toBe(r3.rolloutId);
      expect(await h.store.dequeueRollout()).toBeNull();
      expect((await h.store.getRolloutById(r1.rolloutId))?.status).toBe('succeeded');
      expect((await h.store.getRolloutById(r2.rolloutId))?.status).toBe('failed');
      expect((await h.store.getRolloutById(r1.rolloutId))?.endTime).toBe(h.clock.now());
    });

    it('#5 update to requeuing puts a claimed rollout back; the next dequeue creates attempt #2', async () => {
      const r = await h.store.enqueueRollout({ input: 1 });
      await h.store.dequeueRollout();
      await h.store.updateRollout(r.rolloutId, { status: 'requeuing' });
      const again = await h.store.dequeueRollout();
      expect(again).toMatchObject({ rolloutId: r.rolloutId, status: 'preparing', attempt: { sequenceId: 2 } });
      expect((await h.store.queryAttempts({ rolloutId: r.rolloutId })).total).toBe(2);
      expect(await h.store.dequeueRollout()).toBeNull();
    });

    it('#6 enqueueRollouts keeps input order and dequeueRollouts takes a FIFO batch', async () => {
      const [a, b, c] = await h.store.enqueueRollouts([{ input: 'a' }, { input: 'b', mode: 'val' }, { input: 'c' }]);
      expect([a?.input, b?.input, c?.input]).toEqual(['a', 'b', 'c']);
      expect(b?.mode).toBe('val');
      const batch = await h.store.dequeueRollouts({ limit: 2 });
      expect(batch.map((r) => r.rolloutId)).toEqual([a?.rolloutId, b?.rolloutId]);
      expect(await h.store.dequeueRollouts({ limit: 0 })).toEqual([]);
      expect(await h.store.dequeueRollouts({ limit: -3 })).toEqual([]);
      expect((await h.store.dequeueRollouts({ limit: 5 })).map((r) => r.rolloutId)).toEqual([c?.rolloutId]);
      expect(await h.store.enqueueRollouts([])).toEqual([]);
    });

    it('#9 end times: running keeps it null; failed sets it and the rollout follows', async () => {
      const r = await h.store.startRollout({ input: 1 });
      const running = await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'running' });
      expect(running.endTime).toBeNull();
      h.clock.advance(3);
      const failed = await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'failed' });
      expect(failed.endTime).toBeGreaterThanOrEqual(failed.startTime);
      const rollout = await h.store.getRolloutById(r.rolloutId);
      expect(rollout?.status).toBe('failed');
      expect(rollout?.endTime).toBeGreaterThanOrEqual(failed.endTime!);
    });

    it('#10 startAttempt ignores maxAttempts; only the latest attempt drives the rollout', async () => {
      const r = await h.store.enqueueRollout({ input: 1 });
      const a1 = await h.store.startAttempt(r.rolloutId);
      const a2 = await h.store.startAttempt(r.rolloutId);
      const a3 = await h.store.startAttempt(r.rolloutId);
      expect([a1.attempt.sequenceId, a2.attempt.sequenceId, a3.attempt.sequenceId]).toEqual([1, 2, 3]);
      expect(a3.status).toBe('preparing');
      await h.store.updateAttempt(r.rolloutId, a1.attempt.attemptId, { status: 'succeeded' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('preparing');
      expect((await h.store.getLatestAttempt(r.rolloutId))?.attemptId).toBe(a3.attempt.attemptId);
      await h.store.updateAttempt(r.rolloutId, a3.attempt.attemptId, { status: 'succeeded' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('succeeded');
    });

    it('#11 a failure of the latest attempt requeues per retryCondition; a non-latest failure changes nothing', async () => {
      const r = await h.store.enqueueRollout({ input: 1, config: { maxAttempts: 3, retryCondition: ['failed'] } });
      const first = await h.store.dequeueRollout();
      const second = await h.store.startAttempt(r.rolloutId);
      await h.store.updateAttempt(r.rolloutId, first!.attempt.attemptId, { status: 'failed' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('preparing');
      await h.store.updateAttempt(r.rolloutId, second.attempt.attemptId, { status: 'failed' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('requeuing');
      const third = await h.store.dequeueRollout();
      expect(third?.attempt.sequenceId).toBe(3);
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'failed' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('failed');
      expect(await h.store.dequeueRollout()).toBeNull();
    });

    it('a failure whose status is not in retryCondition fails the rollout at once', async () => {
      const r = await h.store.startRollout({ input: 1, config: { maxAttempts: 3, retryCondition: ['timeout'] } });
      await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'failed' });
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('failed');
    });

    it('a cancelled rollout is not overwritten when its latest attempt later succeeds (quirk 3 fixed)', async () => {
      const r = await h.store.startRollout({ input: 1 });
      await h.store.updateRollout(r.rolloutId, { status: 'cancelled' });
      const attempt = await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'succeeded' });
      expect(attempt.status).toBe('succeeded');
      const rollout = await h.store.getRolloutById(r.rolloutId);
      expect(rollout?.status).toBe('cancelled');
    });

    it('updateRollout changes only the given fields', async () => {
      const r = await h.store.enqueueRollout({ input: 'old', mode: 'train', metadata: { a: 1 } });
      const updated = await h.store.updateRollout(r.rolloutId, {
        input: { new: true },
        metadata: null,
        resourcesId: 'rs-x',
      });
      expect(updated).toMatchObject({
        input: { new: true },
        metadata: null,
        resourcesId: 'rs-x',
        mode: 'train',
        status: 'queuing',
      });
      const config = {
        timeoutSeconds: 5,
        unresponsiveSeconds: null,
        maxAttempts: 2,
        retryCondition: ['timeout' as const],
      };
      await h.store.updateRollout(r.rolloutId, { config, mode: null });
      expect(await h.store.getRolloutById(r.rolloutId)).toMatchObject({ config, mode: null, input: { new: true } });
    });

    it('requeuing an already queued rollout does not duplicate it in the queue', async () => {
      const r = await h.store.enqueueRollout({ input: 1 });
      await h.store.updateRollout(r.rolloutId, { status: 'requeuing' });
      await h.store.updateRollout(r.rolloutId, { status: 'queuing' });
      expect((await h.store.dequeueRollout())?.rolloutId).toBe(r.rolloutId);
      expect(await h.store.dequeueRollout()).toBeNull();
    });
  });
}
