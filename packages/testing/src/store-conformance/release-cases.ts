import { describe, expect, it } from 'vitest';
import type { Release } from '@agl/core/schema';
import { applyRecords, recordFeedback, type LightningStore, type ReleaseStore } from '@agl/core/store';
import { expectAglError, type Harness } from './harness';

const prompt = (template: string) => ({
  main: { resourceType: 'prompt_template' as const, template, engine: 'f-string' as const },
});

function releases(store: LightningStore): ReleaseStore {
  if (!store.startRelease) throw new Error('this store has no release methods (startRelease)');
  return store as LightningStore & ReleaseStore;
}

/** `n` finished production requests of a release's arm, each with a feedback reward. */
async function recordArm(
  store: LightningStore,
  release: Release,
  arm: 'baseline' | 'candidate',
  rewards: number[],
  failed = 0,
  start = 1_600_000_000,
): Promise<void> {
  const records: unknown[] = [];
  rewards.forEach((_, i) => {
    const rolloutId = `ro-${release.releaseId}-${arm}-${i}`;
    records.push(
      {
        kind: 'start',
        rolloutId,
        attemptId: `${rolloutId}-a`,
        input: i,
        metadata: { source: 'production', release_id: release.releaseId, release_arm: arm },
        resourcesId: arm === 'baseline' ? release.baseline : release.candidate,
        startTime: start + i,
      },
      {
        kind: 'end',
        rolloutId,
        attemptId: `${rolloutId}-a`,
        status: i < failed ? 'failed' : 'succeeded',
        endTime: start + i + 0.2,
      },
    );
  });
  const result = await applyRecords(store, records);
  expect(result.rejected).toEqual([]);
  for (const [i, reward] of rewards.entries()) {
    await recordFeedback(store, `ro-${release.releaseId}-${arm}-${i}`, reward);
  }
}

/** Guarded releases (DESIGN.md Contract 4c): the record, its decisions, and what a service is served. */
export function releaseCases(h: Harness): void {
  describe('releases', () => {
    it('starts a release against the latest, lists and reads it, and serves both arms while it runs', async () => {
      const base = await h.store.addResources(prompt('v1 {q}'));
      const cand = await h.store.addResources(prompt('v2 {q}'));
      await h.store.updateResources(base.resourcesId, prompt('v1 {q}')); // base is the latest again (version 2)
      const r = releases(h.store);
      const release = await r.startRelease({ candidate: cand.resourcesId, minRequests: 5 });
      expect(release).toMatchObject({
        state: 'running',
        baseline: base.resourcesId,
        candidate: cand.resourcesId,
        share: 0.01,
        shares: [0.01, 0.1, 0.5, 1],
        metric: 'feedback',
        guards: ['failure-rate:+0.02', 'latency-p95:+20%'],
        minRequests: 5,
        alpha: 0.05,
      });
      expect(release.releaseId).toMatch(/^rel-/);
      expect(release.decisions.map((d) => d.action)).toEqual(['start']);
      expect(await r.getRelease(release.releaseId)).toEqual(release);
      expect((await r.listReleases()).map((x) => x.releaseId)).toEqual([release.releaseId]);
      const serving = await r.getServingResources();
      expect(serving.latest?.resourcesId).toBe(base.resourcesId);
      expect(serving.release).toMatchObject({ releaseId: release.releaseId, share: 0.01 });
      expect(serving.release?.baseline.resources).toEqual(base.resources);
      expect(serving.release?.candidate.resources).toEqual(cand.resources);
      expect(await r.getRelease('rel-unknown')).toBeNull();
    });

    it('publishes a candidate without making it the latest, and promotion makes it the latest', async () => {
      const base = await h.store.addResources(prompt('v1'));
      const r = releases(h.store);
      const release = await r.startRelease({
        candidateResources: prompt('v2'),
        candidateId: 'bot-v2',
        shares: [0.5, 1],
      });
      expect(release.candidate).toBe('bot-v2');
      expect((await h.store.getLatestResources())?.resourcesId).toBe(base.resourcesId);
      expect((await h.store.getResourcesById('bot-v2'))?.resources).toEqual(prompt('v2'));
      const promoted = await r.promoteRelease(release.releaseId);
      expect(promoted).toMatchObject({ state: 'promoted', share: 1 });
      expect(promoted.decisions.at(-1)).toMatchObject({ action: 'promote', by: 'manual' });
      expect((await h.store.getLatestResources())?.resourcesId).toBe('bot-v2');
      expect((await r.getServingResources()).release).toBeNull();
      await expectAglError(r.abortRelease(release.releaseId), 'AGL_ConflictError', /already ended/);
    });

    it('abort leaves the baseline the latest; one release runs at a time; bad settings name the field', async () => {
      await h.store.addResources(prompt('v1'));
      const cand = await h.store.addResources(prompt('v2'));
      const base = await h.store.updateResources('base', prompt('v1b'));
      const r = releases(h.store);
      await expectAglError(
        r.startRelease({ candidate: cand.resourcesId, shares: [0.5, 0.2] }),
        'AGL_ValidationError',
        /shares/,
      );
      await expectAglError(
        r.startRelease({ candidate: cand.resourcesId, guards: ['speed:+1'] }),
        'AGL_ValidationError',
        /guard/,
      );
      await expectAglError(r.startRelease({ candidate: 'rs-missing' }), 'AGL_NotFoundError', /candidate/);
      await expectAglError(r.startRelease({ candidate: base.resourcesId }), 'AGL_ValidationError', /also the baseline/);
      const release = await r.startRelease({ candidate: cand.resourcesId });
      await expectAglError(r.startRelease({ candidate: cand.resourcesId }), 'AGL_ConflictError', /still running/);
      const aborted = await r.abortRelease(release.releaseId, { reason: 'wrong prompt' });
      expect(aborted).toMatchObject({ state: 'aborted', share: 0 });
      expect(aborted.decisions.at(-1)).toMatchObject({ action: 'abort', reason: 'wrong prompt', by: 'manual' });
      expect((await h.store.getLatestResources())?.resourcesId).toBe('base');
      await expectAglError(r.promoteRelease('rel-nope'), 'AGL_NotFoundError');
    });

    it('evaluation ramps on recorded results, and rolls back a candidate whose failure rate is worse', async () => {
      const base = await h.store.addResources(prompt('v1'));
      const cand = await h.store.addResources(prompt('v2'));
      await h.store.updateResources(base.resourcesId, prompt('v1'));
      const r = releases(h.store);
      let release = await r.startRelease({ candidate: cand.resourcesId, minRequests: 12, shares: [0.1, 1] });
      // Requests count toward a share from its start (the store's clock) on.
      const now = h.clock.now();
      await recordArm(
        h.store,
        release,
        'baseline',
        Array.from({ length: 40 }, (_, i) => i % 2),
        0,
        now,
      );
      await recordArm(
        h.store,
        release,
        'candidate',
        Array.from({ length: 12 }, (_, i) => i % 2),
        0,
        now,
      );
      release = await r.evaluateRelease(release.releaseId);
      expect(release.arms?.candidate).toMatchObject({ requests: 12, failures: 0, metricCount: 12, metricMean: 0.5 });
      expect(release.arms?.baseline).toMatchObject({ requests: 40, metricCount: 40 });
      expect(release.decisions.at(-1)).toMatchObject({ action: 'ramp', share: 1, by: 'automatic' });
      expect(release.share).toBe(1);
      expect(release.shareHistory.map((x) => x.share)).toEqual([0.1, 1]);
      expect((await r.getServingResources()).release?.share).toBe(1);

      await r.abortRelease(release.releaseId);
      let second = await r.startRelease({ candidate: cand.resourcesId, minRequests: 1000 });
      await recordArm(h.store, second, 'baseline', Array(60).fill(1));
      await recordArm(h.store, second, 'candidate', Array(30).fill(1), 20);
      second = await r.evaluateRelease(second.releaseId);
      expect(second).toMatchObject({ state: 'rolled_back', share: 0 });
      expect(second.decisions.at(-1)?.reason).toMatch(/failure-rate/);
      expect(second.decisions.at(-1)?.figures).toMatchObject({ candidate_requests: 30, baseline_requests: 60 });
      expect((await h.store.getLatestResources())?.resourcesId).toBe(base.resourcesId);
    });
  });
}
