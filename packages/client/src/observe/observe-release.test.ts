import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@agl/core/random';
import type { Release } from '@agl/core/schema';
import type { ServingResources } from '@agl/core/store';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configureObserve, flushObserve, shutdownObserve, StoreClient } from '../index';
import { DEFAULT_PROMPT, startReleaseService, type ServiceAnswer } from './__fixtures__/release-service';
import { servedResources, unitPosition } from './release-assignment';

const TOKEN = 'release-secret';
const prompt = (template: string) => ({
  main: { resourceType: 'prompt_template' as const, template, engine: 'f-string' as const },
});
const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message) };

/** Runs `count` asks, `parallel` at a time. */
async function traffic(
  count: number,
  parallel: number,
  ask: (i: number) => Promise<ServiceAnswer>,
): Promise<ServiceAnswer[]> {
  const out: ServiceAnswer[] = new Array<ServiceAnswer>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await ask(i);
      }
    }),
  );
  return out;
}

describe('serving resources and release arms in observeHandler (real store server, SQLite file, test LLM)', () => {
  let dir: string;
  let store: SqliteStore;
  let server: StoreServer;
  let client: StoreClient;
  const closers: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    warnings.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'agl-release-'));
    store = new SqliteStore({ path: join(dir, 'store.sqlite') });
    server = await createStoreServer({ store, port: 0, token: TOKEN });
    client = new StoreClient({ url: server.url, token: TOKEN });
  });
  afterEach(async () => {
    await shutdownObserve(2_000);
    for (const close of closers.splice(0).reverse()) await close();
    await client.close();
    await server.close();
    store.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  async function service(options: Parameters<typeof startReleaseService>[0] = {}) {
    const s = await startReleaseService(options);
    closers.push(s.close);
    return s;
  }

  it('each rollout records the resources that served it: 1,000 requests with a publish every 50; defaults record no id', async () => {
    configureObserve({ store: server.url, token: TOKEN, logger, resourcesTtlMs: 1, resourcesFirstWaitMs: 2_000 });
    const s = await service();
    const answers: ServiceAnswer[] = [];
    // 20 rounds of 50 requests (5 at a time), a publish between two rounds.
    for (let round = 0; round < 20; round += 1) {
      if (round > 0) await store.addResources(prompt(`PROMPT v${round}`));
      answers.push(...(await traffic(50, 5, (i) => s.ask(`u${round}-${i}`))));
    }
    expect(await flushObserve(10_000)).toBe(true);
    const rollouts = (await store.queryRollouts({ limit: -1 })).items;
    expect(rollouts).toHaveLength(1000);
    const byId = new Map(rollouts.map((r) => [r.rolloutId, r]));
    const templates = new Map((await store.queryResources({ limit: -1 })).items.map((r) => [r.resourcesId, r]));
    let defaults = 0;
    for (const answer of answers) {
      const rollout = byId.get(answer.rolloutId!)!;
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId, name: SPAN_CHAT_COMPLETION })).items;
      expect(spans).toHaveLength(1);
      const sent = spans[0]!.attributes['gen_ai.prompt.0.content'];
      expect(sent).toBe(answer.prompt);
      if (rollout.resourcesId === null) {
        defaults += 1;
        expect(sent).toBe(DEFAULT_PROMPT);
        expect(rollout.metadata?.resources_version).toBeUndefined();
      } else {
        const served = templates.get(rollout.resourcesId)!;
        expect(served.resources.main).toMatchObject({ template: sent });
        expect(rollout.metadata?.resources_version).toBe(served.version);
      }
    }
    // The first 50 requests ran before anything was published: the defaults served them, and no id is recorded.
    expect(defaults).toBeGreaterThanOrEqual(50);
    expect(new Set(rollouts.map((r) => r.resourcesId)).size).toBeGreaterThanOrEqual(15);
  }, 240_000);

  it('arms: shares within ±3 points over 10,000 unit keys, and a key never leaves the candidate while the share grows', () => {
    const serving = (share: number): ServingResources => ({
      latest: null,
      release: {
        releaseId: 'rel-shares',
        share,
        baseline: { resourcesId: 'rs-b', version: 1, createTime: 1, updateTime: 1, resources: prompt('B') },
        candidate: { resourcesId: 'rs-c', version: 3, createTime: 1, updateTime: 1, resources: prompt('C') },
      },
    });
    const keys = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
    let previous = new Set<string>();
    for (const share of [0.01, 0.1, 0.5, 1]) {
      const onCandidate = new Set(keys.filter((k) => servedResources(serving(share), k).release?.arm === 'candidate'));
      expect(Math.abs(onCandidate.size / keys.length - share)).toBeLessThanOrEqual(0.03);
      for (const key of previous) expect(onCandidate.has(key)).toBe(true);
      previous = onCandidate;
    }
    const served = servedResources(serving(1), 'user-1');
    expect(served).toMatchObject({
      resourcesId: 'rs-c',
      resourcesVersion: 3,
      release: { releaseId: 'rel-shares', arm: 'candidate' },
    });
  });

  it('sticky assignment through observeHandler; rollouts carry the release, the arm and the version', async () => {
    const base = await store.addResources(prompt('BASE'));
    const release = await client.startRelease({
      candidateResources: prompt('CANDIDATE'),
      shares: [0.5, 1],
      minRequests: 10_000,
    });
    configureObserve({ store: server.url, token: TOKEN, logger, resourcesFirstWaitMs: 2_000 });
    const s = await service();
    const answers = await traffic(120, 6, (i) => s.ask(`user-${i % 30}`));
    expect(await flushObserve(10_000)).toBe(true);
    const armOf = new Map<string, string>();
    for (const [i, answer] of answers.entries()) {
      const user = `user-${i % 30}`;
      expect(answer.status).toBe(200);
      expect(answer.prompt).toBe(answer.arm === 'candidate' ? 'CANDIDATE' : 'BASE');
      if (armOf.has(user)) expect(answer.arm).toBe(armOf.get(user));
      armOf.set(user, answer.arm!);
      const rollout = (await store.getRolloutById(answer.rolloutId!))!;
      expect(rollout.resourcesId).toBe(answer.arm === 'candidate' ? release.candidate : base.resourcesId);
      expect(rollout.metadata).toMatchObject({
        release_id: release.releaseId,
        release_arm: answer.arm,
        resources_version: 1,
      });
    }
    expect(new Set(armOf.values())).toEqual(new Set(['baseline', 'candidate']));
  }, 120_000);

  async function runRelease(
    s: Awaited<ReturnType<typeof service>>,
    release: Release,
    rewardMean: { baseline: number; candidate: number },
    seed: number,
  ): Promise<Release> {
    const random = seededRandom(seed);
    let current = release;
    for (let batch = 0; batch < 30 && current.state === 'running'; batch += 1) {
      const answers = await traffic(50, 8, (i) => s.ask(`b${batch}-u${i}`));
      expect(answers.every((a) => a.rolloutId !== null)).toBe(true);
      expect(await flushObserve(10_000)).toBe(true);
      // Users give feedback on a share of the answers (every candidate answer, a quarter of the baseline's).
      for (const a of answers) {
        if (a.status !== 200 || (a.arm === 'baseline' && random() > 0.25)) continue;
        await client.addFeedback(a.rolloutId!, random() < rewardMean[a.arm as 'baseline' | 'candidate'] ? 1 : 0);
      }
      // The server evaluates after each batch in the background; this waits for the decision of this batch.
      current = await client.evaluateRelease(release.releaseId);
    }
    return current;
  }

  it('a candidate with a higher true feedback mean is promoted through every share and becomes the latest', async () => {
    await store.addResources(prompt('BASE'));
    // A shorter schedule than the default (1% needs thousands of requests; release-decision.test.ts runs the default
    // schedule on synthetic results): the same code path, every share.
    const release = await client.startRelease({
      candidateResources: prompt('CANDIDATE'),
      shares: [0.1, 0.25, 0.5, 1],
      minRequests: 15,
    });
    configureObserve({ store: server.url, token: TOKEN, logger, resourcesTtlMs: 20, resourcesFirstWaitMs: 2_000 });
    const s = await service();
    const ended = await runRelease(s, release, { baseline: 0.4, candidate: 0.95 }, 7);
    expect(ended.state).toBe('promoted');
    expect(ended.shareHistory.map((h) => h.share)).toEqual([0.1, 0.25, 0.5, 1]);
    expect(ended.decisions.map((d) => d.action)).toEqual(['start', 'ramp', 'ramp', 'ramp', 'promote']);
    expect(ended.decisions.every((d) => d.action === 'start' || d.by === 'automatic')).toBe(true);
    expect((await store.getLatestResources())?.resourcesId).toBe(release.candidate);
    // The next requests (after the cache's refresh) are all served by the promoted candidate, with no release.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await s.ask('warm');
    const after = await traffic(20, 4, (i) => s.ask(`after-${i}`));
    expect(after.every((a) => a.prompt === 'CANDIDATE' && a.arm === null)).toBe(true);
  }, 240_000);

  it('a candidate with a higher failure rate is rolled back before it reaches 50%', async () => {
    const base = await store.addResources(prompt('BASE'));
    const release = await client.startRelease({
      candidateResources: prompt('CANDIDATE'),
      shares: [0.1, 0.25, 0.5, 1],
      minRequests: 40,
    });
    configureObserve({ store: server.url, token: TOKEN, logger, resourcesTtlMs: 20, resourcesFirstWaitMs: 2_000 });
    const random = seededRandom(11);
    const s = await service({ failRate: (p) => (p === 'CANDIDATE' ? 0.4 : 0.01), random });
    const ended = await runRelease(s, release, { baseline: 0.5, candidate: 0.5 }, 12);
    expect(ended.state).toBe('rolled_back');
    expect(Math.max(...ended.shareHistory.map((h) => h.share))).toBeLessThan(0.5);
    expect(ended.decisions.at(-1)).toMatchObject({ action: 'rollback', by: 'automatic' });
    expect(ended.decisions.at(-1)!.reason).toMatch(/failure-rate/);
    expect((await store.getLatestResources())?.resourcesId).toBe(base.resourcesId);
  }, 240_000);

  it('store unreachable mid-release: every request answered on the same arm; decisions resume after the restart', async () => {
    await store.addResources(prompt('BASE'));
    const release = await client.startRelease({
      candidateResources: prompt('CANDIDATE'),
      shares: [0.5, 1],
      minRequests: 15,
    });
    configureObserve({ store: server.url, token: TOKEN, logger, resourcesTtlMs: 1, resourcesFirstWaitMs: 2_000 });
    const s = await service();
    // Six users on each arm whatever the release id, so the candidate gets its 15 results (24 requests).
    const users = balancedUsers(release.releaseId, 6);
    const before = await traffic(12, 4, (i) => s.ask(users[i]!));
    expect(await flushObserve(10_000)).toBe(true);
    const port = Number(new URL(server.url).port);
    await server.close();
    const during = await traffic(36, 4, (i) => s.ask(users[i % 12]!));
    expect(during.every((a) => a.status === 200)).toBe(true);
    during.forEach((a, i) => expect(a.arm).toBe(before[i % 12]!.arm));
    expect((await store.getRelease(release.releaseId))?.decisions.map((d) => d.action)).toEqual(['start']);
    const restartedAt = Date.now() / 1000;
    server = await createStoreServer({ store, port, token: TOKEN });
    expect(await flushObserve(15_000)).toBe(true);
    // The buffered results reach the store, whose evaluation after the batch ramps the release.
    let current = (await store.getRelease(release.releaseId))!;
    for (let i = 0; i < 50 && current.share < 1; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await store.getRelease(release.releaseId))!;
    }
    const candidates = [...before, ...during].filter((a) => a.arm === 'candidate').length;
    expect(candidates).toBeGreaterThanOrEqual(15);
    expect(current.decisions.at(-1)).toMatchObject({ action: 'ramp', share: 1, by: 'automatic' });
    expect(current.decisions.at(-1)!.time).toBeGreaterThanOrEqual(restartedAt - 1);
  }, 120_000);
});

/** 2n unit keys, n on each side of position 0.5 for the release (so each arm gets n at share 0.5). */
function balancedUsers(releaseId: string, n: number): string[] {
  const low: string[] = [];
  const high: string[] = [];
  for (let i = 0; low.length < n || high.length < n; i += 1) {
    const key = `user-${i}`;
    const side = unitPosition(releaseId, key) < 0.5 ? low : high;
    if (side.length < n) side.push(key);
  }
  return [...low, ...high];
}
