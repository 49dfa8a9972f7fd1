import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyRecords, recordFeedback } from '@agl/core/store';
import { createStoreServer } from '@agl/store/server';
import { SqliteStore } from '@agl/store/sqlite';
import { agl } from './__fixtures__/run-agl';

const dir = mkdtempSync(join(tmpdir(), 'agl-cli-release-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const prompt = (template: string) => ({ main: { resource_type: 'prompt_template', template } });

describe('agl release and agl resources publish --release', () => {
  it('publishes a candidate without making it latest, reports status as JSON and text, and promotes it', async () => {
    const db = join(dir, 'a.sqlite');
    const base = join(dir, 'base.json');
    const cand = join(dir, 'cand.json');
    writeFileSync(base, JSON.stringify(prompt('BASE')));
    writeFileSync(cand, JSON.stringify(prompt('CANDIDATE')));
    const baseId = (await agl('resources', 'publish', base, '--store', db)).out.trim();

    const bad = await agl('resources', 'publish', cand, '--release', '--guard', 'speed:+1', '--store', db);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/--guard: guard "speed:\+1"/);
    const noRelease = await agl('resources', 'publish', cand, '--shares', '0.5,1', '--store', db);
    expect(noRelease.err).toMatch(/go with --release/);

    const published = await agl(
      'resources',
      'publish',
      cand,
      '--release',
      '--id',
      'bot-v2',
      '--shares',
      '0.2,1',
      '--min-requests',
      '12',
      '--guard',
      'failure-rate:+0.05',
      '--max-duration',
      '6h',
      '--store',
      db,
    );
    expect(published).toMatchObject({ code: 0 });
    const releaseId = published.out.trim();
    expect(releaseId).toMatch(/^rel-/);
    expect(published.err).toMatch(/stays the latest/);
    expect(JSON.parse((await agl('resources', 'show', '--store', db)).out).resources_id).toBe(baseId);

    // Results recorded by a service: 60 baseline and 12 candidate requests with feedback.
    const store = new SqliteStore({ path: db });
    const now = Date.now() / 1000;
    for (const [arm, n] of [
      ['baseline', 60],
      ['candidate', 12],
    ] as const) {
      const records = Array.from({ length: n }, (_, i) => [
        {
          kind: 'start',
          rolloutId: `ro-${arm}-${i}`,
          attemptId: `at-${arm}-${i}`,
          input: i,
          startTime: now + i,
          metadata: { source: 'production', release_id: releaseId, release_arm: arm },
          resourcesId: arm === 'baseline' ? baseId : 'bot-v2',
        },
        {
          kind: 'end',
          rolloutId: `ro-${arm}-${i}`,
          attemptId: `at-${arm}-${i}`,
          status: 'succeeded',
          endTime: now + i + 0.3,
        },
      ]).flat();
      await applyRecords(store, records);
      for (let i = 0; i < n; i += 1) await recordFeedback(store, `ro-${arm}-${i}`, i % 2);
    }
    await store.evaluateRelease!(releaseId);
    await store.close();

    const status = await agl('release', 'status', '--json', '--store', db);
    expect(status.code).toBe(0);
    const json = JSON.parse(status.out) as Record<string, unknown>;
    expect(Object.keys(json).slice(0, 7)).toEqual([
      'id',
      'state',
      'share',
      'baseline',
      'candidate',
      'arms',
      'decisions',
    ]);
    expect(json).toMatchObject({ id: releaseId, state: 'running', share: 1, baseline: baseId, candidate: 'bot-v2' });
    expect(json.arms).toMatchObject({
      baseline: { requests: 60, metric_count: 60, metric_mean: 0.5 },
      candidate: { requests: 12, metric_count: 12 },
    });
    expect((json.decisions as Array<{ action: string }>).map((d) => d.action)).toEqual(['start', 'ramp']);
    expect(json).toMatchObject({ guards: ['failure-rate:+0.05'], max_duration_seconds: 21_600, min_requests: 12 });

    const text = await agl('release', 'status', releaseId, '--store', db);
    expect(text.out).toMatch(/running, candidate share 1/);
    expect(text.out).toMatch(/baseline\s+rs-\w+\s+60\s+0\.500 \[/);
    expect(text.out).toMatch(/ramp\s+1\s+automatic\s+not worse after 12 candidate requests/);

    // The next training round reads the candidate's requests.
    const out = join(dir, 'candidate.jsonl');
    const built = await agl(
      'dataset',
      'build',
      '--release',
      releaseId,
      '--arm',
      'candidate',
      '--out',
      out,
      '--json',
      '--store',
      db,
    );
    expect(JSON.parse(built.out)).toMatchObject({ train: 12 });
    const armOnly = await agl('dataset', 'build', '--arm', 'candidate', '--out', out, '--store', db);
    expect(armOnly.err).toMatch(/pass the release id too/);

    const promoted = await agl('release', 'promote', '--reason', 'looks good', '--store', db);
    expect(promoted).toMatchObject({ code: 0, out: `${releaseId} promoted\n` });
    expect(JSON.parse((await agl('resources', 'show', '--store', db)).out).resources_id).toBe('bot-v2');
    const again = await agl('release', 'abort', '--store', db);
    expect(again.err).toMatch(/No release is running/);
  });

  it('agl release start / abort against a store server with a token', async () => {
    const store = new SqliteStore({ path: join(dir, 'b.sqlite') });
    const server = await createStoreServer({ store, port: 0, token: 'tok' });
    try {
      const base = await store.addResources({ main: { resourceType: 'prompt_template', template: 'A' } });
      const cand = await store.addResources({ main: { resourceType: 'prompt_template', template: 'B' } });
      await store.updateResources(base.resourcesId, base.resources);
      const flags = ['--store-url', server.url, '--token', 'tok'];
      expect((await agl('release', 'start', '--candidate', 'rs-none', ...flags)).err).toMatch(
        /candidate: resources rs-none not found/,
      );
      const started = await agl('release', 'start', '--candidate', cand.resourcesId, '--json', ...flags);
      expect(started.code).toBe(0);
      const release = JSON.parse(started.out) as { id: string; share: number; baseline: string };
      expect(release).toMatchObject({ share: 0.01, baseline: base.resourcesId });
      expect((await agl('release', 'start', '--candidate', cand.resourcesId, ...flags)).err).toMatch(/still running/);
      expect((await agl('release', 'status', '--max-duration', 'x', ...flags)).code).not.toBe(0);
      const aborted = await agl('release', 'abort', release.id, ...flags);
      expect(aborted.out).toBe(`${release.id} aborted\n`);
      expect((await agl('release', 'status', release.id, '--json', ...flags)).out).toMatch(/"state": "aborted"/);
      expect((await agl('release', 'status', 'rel-missing', ...flags)).err).toMatch(/No release rel-missing/);
      expect((await agl('release', 'status', ...flags.slice(0, 2))).err).toMatch(/401|token/i);
    } finally {
      await server.close();
      await store.close();
    }
  });
});
