import { describe, expect, it } from 'vitest';
import { expectAglError, expectWorkerReleased, type Harness } from './harness';

const prompt = (template: string) => ({
  p: { resourceType: 'prompt_template' as const, template, engine: 'f-string' as const },
});

/** Checklist items 24–27: resources versions, worker status derivation, waitForRollouts. */
export function resourceWorkerCases(h: Harness): void {
  describe('resources', () => {
    it('#24 rollouts inherit the latest resources id; an explicit unknown id is kept (quirk 5 kept)', async () => {
      await h.store.updateResources('current', prompt('a {x}'));
      expect((await h.store.enqueueRollout({ input: 1 })).resourcesId).toBe('current');
      expect((await h.store.startRollout({ input: 1 })).resourcesId).toBe('current');
      expect((await h.store.enqueueRollout({ input: 1, resourcesId: 'override' })).resourcesId).toBe('override');
      h.clock.advance(1);
      await h.store.updateResources('new', prompt('b'));
      const [batched] = await h.store.enqueueRollouts([{ input: 2 }]);
      expect(batched?.resourcesId).toBe('new');
      expect((await h.store.getLatestResources())?.resourcesId).toBe('new');
    });

    it('#25 updateResources bumps the version and keeps createTime; addResources always makes a new id', async () => {
      const v1 = await h.store.updateResources('main', prompt('one'));
      expect(v1).toMatchObject({
        resourcesId: 'main',
        version: 1,
        createTime: h.clock.now(),
        updateTime: h.clock.now(),
      });
      h.clock.advance(2);
      const v2 = await h.store.updateResources('main', prompt('two'));
      expect(v2).toMatchObject({ version: 2, createTime: v1.createTime });
      expect(v2.updateTime).toBeGreaterThan(v1.updateTime);
      expect((await h.store.getResourcesById('main'))?.resources).toEqual(prompt('two'));
      expect((await h.store.updateResources('other', prompt('x'))).version).toBe(1);
      const added1 = await h.store.addResources(prompt('y'));
      const added2 = await h.store.addResources(prompt('y'));
      expect(added1.resourcesId).toMatch(/^rs-[0-9a-f]{12}$/);
      expect(added2.resourcesId).not.toBe(added1.resourcesId);
      expect([added1.version, added2.version]).toEqual([1, 1]);
      expect((await h.store.getLatestResources())?.resourcesId).toBe(added2.resourcesId);
      expect((await h.store.queryResources()).total).toBe(4);
      expect((await h.store.queryResources({ resourcesIdContains: 'rs-' })).total).toBe(2);
      expect((await h.store.queryResources({ resourcesId: 'main' })).items[0]?.version).toBe(2);
      const llm = await h.store.addResources({ m: { resourceType: 'llm', endpoint: 'http://h/v1', model: 'x' } });
      expect(llm.resources.m).toEqual({
        resourceType: 'llm',
        endpoint: 'http://h/v1',
        model: 'x',
        apiKey: null,
        samplingParameters: {},
      });
    });
  });

  describe('workers', () => {
    it('#26 worker status is derived from its attempts and heartbeat stats survive every sync', async () => {
      const hb = await h.store.updateWorker('w', { heartbeatStats: { cpu: 0.5 } });
      expect(hb).toMatchObject({
        workerId: 'w',
        status: 'unknown',
        heartbeatStats: { cpu: 0.5 },
        lastHeartbeatTime: h.clock.now(),
      });
      await h.store.enqueueRollout({ input: 1 });
      h.clock.advance(1);
      const claimed = await h.store.dequeueRollout({ workerId: 'w' });
      expect(claimed?.attempt.workerId).toBe('w');
      const worker = await h.store.getWorkerById('w');
      expect(worker).toMatchObject({
        status: 'busy',
        currentRolloutId: claimed?.rolloutId,
        currentAttemptId: claimed?.attempt.attemptId,
        lastDequeueTime: h.clock.now(),
        lastBusyTime: h.clock.now(),
        heartbeatStats: { cpu: 0.5 },
      });
      h.clock.advance(1);
      await h.store.updateAttempt(claimed!.rolloutId, 'latest', { status: 'succeeded' });
      await expectWorkerReleased(h, 'w', 'idle', { cpu: 0.5 });
      h.clock.advance(1);
      await h.store.updateWorker('w');
      expect(await h.store.getWorkerById('w')).toMatchObject({
        status: 'idle',
        heartbeatStats: { cpu: 0.5 },
        lastHeartbeatTime: h.clock.now(),
      });
      await expectAglError(h.store.updateWorker('w', { heartbeatStats: null as never }), 'AGL_ValidationError');
    });

    it('#26 assigning a worker through updateAttempt makes it busy', async () => {
      const r = await h.store.startRollout({ input: 1 });
      await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, { workerId: 'w2' });
      expect(await h.store.getWorkerById('w2')).toMatchObject({
        status: 'busy',
        currentRolloutId: r.rolloutId,
        currentAttemptId: r.attempt.attemptId,
      });
      await h.store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'failed' });
      expect((await h.store.getWorkerById('w2'))?.status).toBe('idle');
    });

    it('a dequeue with a worker id that finds nothing marks the worker idle', async () => {
      expect(await h.store.dequeueRollout({ workerId: 'lonely' })).toBeNull();
      expect(await h.store.getWorkerById('lonely')).toMatchObject({
        status: 'idle',
        lastIdleTime: h.clock.now(),
        lastDequeueTime: h.clock.now(),
      });
      h.clock.advance(1);
      await h.store.dequeueRollouts({ limit: 3, workerId: 'lonely' });
      const w = await h.store.getWorkerById('lonely');
      expect(w).toMatchObject({ lastDequeueTime: h.clock.now(), lastIdleTime: h.clock.now() - 1 });
    });

    it('dequeueRollouts syncs only the last claimed attempt to the worker', async () => {
      await h.store.enqueueRollouts([{ input: 1 }, { input: 2 }]);
      const batch = await h.store.dequeueRollouts({ limit: 2, workerId: 'w' });
      expect((await h.store.getWorkerById('w'))?.currentAttemptId).toBe(batch[1]?.attempt.attemptId);
    });

    it('queryWorkers filters by status and id', async () => {
      await h.store.updateWorker('alpha-1');
      await h.store.dequeueRollout({ workerId: 'beta-1' });
      expect((await h.store.queryWorkers({ statusIn: ['idle'] })).items.map((w) => w.workerId)).toEqual(['beta-1']);
      expect((await h.store.queryWorkers({ workerIdContains: 'alpha' })).items.map((w) => w.workerId)).toEqual([
        'alpha-1',
      ]);
      expect(
        (await h.store.queryWorkers({ statusIn: ['idle'], workerIdContains: 'alpha', filterLogic: 'or' })).total,
      ).toBe(2);
    });
  });

  describe('waitForRollouts', () => {
    it('#27 timeout 0 checks once and returns at once', async () => {
      const r = await h.store.enqueueRollout({ input: 1 });
      const started = Date.now();
      expect(await h.store.waitForRollouts([r.rolloutId], { timeoutSeconds: 0 })).toEqual([]);
      expect(await h.store.waitForRollouts(['ro-unknown'], { timeoutSeconds: 0.1 })).toEqual([]);
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('#27 returns only finished rollouts, in input order, as plain rollouts', async () => {
      const a = await h.store.startRollout({ input: 'a' });
      const b = await h.store.startRollout({ input: 'b' });
      const c = await h.store.startRollout({ input: 'c' });
      await h.store.updateAttempt(c.rolloutId, 'latest', { status: 'succeeded' });
      await h.store.updateRollout(a.rolloutId, { status: 'cancelled' });
      const done = await h.store.waitForRollouts([c.rolloutId, b.rolloutId, 'ro-unknown', a.rolloutId], {
        timeoutSeconds: 0.05,
      });
      expect(done.map((r) => r.rolloutId)).toEqual([c.rolloutId, a.rolloutId]);
      expect(done.every((r) => !('attempt' in r))).toBe(true);
    });

    it('#27 resolves as soon as the last pending rollout finishes', async () => {
      const a = await h.store.startRollout({ input: 'a' });
      const b = await h.store.startRollout({ input: 'b' });
      const waiting = h.store.waitForRollouts([a.rolloutId, b.rolloutId], { timeoutSeconds: 20 });
      await h.store.updateAttempt(a.rolloutId, 'latest', { status: 'succeeded' });
      await h.store.updateAttempt(b.rolloutId, 'latest', { status: 'failed' });
      const started = Date.now();
      const done = await waiting;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(done.map((r) => [r.rolloutId, r.status])).toEqual([
        [a.rolloutId, 'succeeded'],
        [b.rolloutId, 'failed'],
      ]);
    });
  });

  describe('waitForQueue (AGL extension)', () => {
    const waitFor = (options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean> => {
      expect(h.store.waitForQueue, 'every AGL backend implements waitForQueue').toBeTypeOf('function');
      return h.store.waitForQueue!(options);
    };

    it('answers true at once while rollouts are queued, false after the timeout when none are', async () => {
      let started = Date.now();
      expect(await waitFor({ timeoutMs: 150 })).toBe(false);
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
      await h.store.enqueueRollout({ input: 1 });
      started = Date.now();
      expect(await waitFor({ timeoutMs: 10_000 })).toBe(true);
      expect(Date.now() - started).toBeLessThan(2000);
      await h.store.dequeueRollout();
      expect(await waitFor({ timeoutMs: 100 })).toBe(false);
    });

    it('wakes on an enqueue and on a retry that requeues, and answers false when aborted', async () => {
      let waiting = waitFor({ timeoutMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const r = await h.store.enqueueRollout({ input: 1, config: { maxAttempts: 2, retryCondition: ['failed'] } });
      let started = Date.now();
      expect(await waiting).toBe(true);
      expect(Date.now() - started).toBeLessThan(3000);
      const claimed = await h.store.dequeueRollout({ workerId: 'w-1' });
      expect(claimed?.rolloutId).toBe(r.rolloutId);
      waiting = waitFor({ timeoutMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await h.store.updateAttempt(r.rolloutId, 'latest', { status: 'failed' });
      started = Date.now();
      expect(await waiting).toBe(true);
      expect(Date.now() - started).toBeLessThan(3000);
      expect((await h.store.getRolloutById(r.rolloutId))?.status).toBe('requeuing');
      expect((await h.store.dequeueRollout())?.attempt.sequenceId).toBe(2);
      const controller = new AbortController();
      const aborted = waitFor({ timeoutMs: 20_000, signal: controller.signal });
      controller.abort();
      started = Date.now();
      expect(await aborted).toBe(false);
      expect(Date.now() - started).toBeLessThan(2000);
    });
  });
}
