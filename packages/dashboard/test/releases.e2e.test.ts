import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  configureObserve,
  observe,
  shutdownObserve,
  StoreClient,
  unitPosition,
  type ObservedRollout,
} from '@agl/client';
import { applyRecords, recordFeedback } from '@agl/core/store';
import { SqliteStore } from '@agl/store/sqlite';
import { isCi } from '@agl/testing';
import { ensureDashboardBuilt, findChromium, serveStore, type ServedStore } from './e2e-support';

/**
 * End to end for releases: a SQLite store with a running release and recorded results of both arms, served by
 * `agl store serve` with the built dashboard, driven in headless Chromium (arms side by side, the decision log, the
 * promote and abort buttons); a service recording through `observe` sees each button take effect on its next requests.
 */
const CHROMIUM = findChromium();
const TOKEN = 'releases-token';
const prompt = (template: string) => ({
  main: { resourceType: 'prompt_template' as const, template, engine: 'f-string' as const },
});
const templateOf = (r: ObservedRollout): string | null => {
  const main = r.resources?.main;
  return main?.resourceType === 'prompt_template' ? main.template : null;
};

describe.skipIf(CHROMIUM === null && !isCi())('releases in the dashboard (chromium + agl store serve)', () => {
  let dir: string;
  let served: ServedStore;
  let browser: Browser;
  let page: Page;
  let client: StoreClient;
  let releaseId: string;

  beforeAll(async () => {
    expect(CHROMIUM, 'CI=true but `chromium` is not installed').not.toBeNull();
    ensureDashboardBuilt();
    dir = await mkdtemp(join(tmpdir(), 'agl-releases-'));
    const db = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path: db });
    const base = await store.addResources(prompt('BASE'));
    const release = await store.startRelease({
      candidateResources: prompt('CANDIDATE'),
      shares: [0.5, 1],
      minRequests: 1000,
    });
    releaseId = release.releaseId;
    const now = Date.now() / 1000;
    for (const [arm, n, failed] of [
      ['baseline', 30, 1],
      ['candidate', 20, 2],
    ] as const) {
      const records = Array.from({ length: n }, (_, i) => [
        {
          kind: 'start',
          rolloutId: `ro-${arm}-${i}`,
          attemptId: `at-${arm}-${i}`,
          input: i,
          startTime: now + i,
          metadata: { source: 'production', release_id: releaseId, release_arm: arm },
          resourcesId: arm === 'baseline' ? base.resourcesId : release.candidate,
        },
        {
          kind: 'end',
          rolloutId: `ro-${arm}-${i}`,
          attemptId: `at-${arm}-${i}`,
          status: i < failed ? 'failed' : 'succeeded',
          endTime: now + i + 0.25,
        },
      ]).flat();
      await applyRecords(store, records);
      for (let i = 0; i < n; i += 1) await recordFeedback(store, `ro-${arm}-${i}`, arm === 'candidate' ? 1 : i % 2);
    }
    await store.evaluateRelease(releaseId);
    await store.close();
    served = await serveStore(db, TOKEN);
    client = new StoreClient({ url: served.url, token: TOKEN });
    configureObserve({
      store: served.url,
      token: TOKEN,
      resourcesTtlMs: 1,
      resourcesFirstWaitMs: 5_000,
      logger: { warn: () => undefined },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM!,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  }, 240_000);

  afterAll(async () => {
    await shutdownObserve(2_000);
    await client?.close();
    await browser?.close();
    await served?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** What `observe` serves `user` on a request, once the cached release state has caught up with `done`. */
  async function nextRequest(user: string, done: (r: ObservedRollout) => boolean): Promise<ObservedRollout> {
    let last: ObservedRollout | undefined;
    // The cache refreshes in the background (TTL 1 ms here): the request that finds it stale starts the read.
    for (let i = 0; i < 40; i += 1) {
      last = await observe({ unitKey: user }, (r) => r);
      if (done(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return last!;
  }

  /** A unit key on the candidate, and one on the baseline, at share 0.5 of this release. */
  const userOn = (arm: 'baseline' | 'candidate', id: string): string => {
    for (let i = 0; ; i += 1) if (unitPosition(id, `user-${i}`) < 0.5 === (arm === 'candidate')) return `user-${i}`;
  };

  it('shows both arms side by side, the share and the decision log', async () => {
    await page.goto(`${served.url}/releases?token=${TOKEN}`);
    await page.getByTestId('release-arms').waitFor();
    expect(await page.getByTestId('selected-release').textContent()).toBe(releaseId);
    expect(await page.getByTestId('release-state').textContent()).toBe('running');
    expect(await page.getByTestId('release-share').textContent()).toBe('50%');
    const baseline = await page.getByTestId('arm-baseline').textContent();
    const candidate = await page.getByTestId('arm-candidate').textContent();
    expect(baseline).toMatch(/baseline.*rs-\w+30.*0\.5 \[.*\] \(n=30\)3%/u);
    expect(candidate).toMatch(/candidate.*20.*1 .*\(n=20\)10%/u);
    expect(await page.getByTestId('decision-row').allTextContents()).toHaveLength(1);
    expect(await page.locator('figure .recharts-line').count()).toBeGreaterThan(0);
  });

  it('abort in the page takes effect on the next request: the candidate user gets the baseline', async () => {
    const user = userOn('candidate', releaseId);
    const before = await nextRequest(user, (r) => r.release !== undefined);
    expect(before.release).toEqual({ releaseId, arm: 'candidate' });
    expect(templateOf(before)).toBe('CANDIDATE');
    await page.getByTestId('abort').click();
    await expect.poll(() => page.getByTestId('release-state').textContent()).toBe('aborted');
    expect(await page.getByTestId('decision-row').last().textContent()).toMatch(
      /abort.*manual.*aborted from the dashboard/u,
    );
    const after = await nextRequest(user, (r) => r.release === undefined);
    expect(after.release).toBeUndefined();
    expect(templateOf(after)).toBe('BASE');
    // Every later request stays on the baseline.
    for (let i = 0; i < 5; i += 1) expect(templateOf(await observe({ unitKey: user }, (r) => r))).toBe('BASE');
  });

  it('promote in the page takes effect on the next request: a baseline user gets the candidate', async () => {
    const second = await client.startRelease({ candidateResources: prompt('CANDIDATE 2'), shares: [0.5, 1] });
    const user = userOn('baseline', second.releaseId);
    const before = await nextRequest(user, (r) => r.release?.releaseId === second.releaseId);
    expect(before.release?.arm).toBe('baseline');
    expect(templateOf(before)).toBe('BASE');
    await page.goto(`${served.url}/releases?id=${second.releaseId}`);
    await expect.poll(() => page.getByTestId('release-state').textContent()).toBe('running');
    await page.getByTestId('promote').click();
    await expect.poll(() => page.getByTestId('release-state').textContent()).toBe('promoted');
    const after = await nextRequest(user, (r) => r.release === undefined);
    expect(templateOf(after)).toBe('CANDIDATE 2');
    expect(after.resourcesId).toBe(second.candidate);
    expect((await client.getLatestResources())?.resourcesId).toBe(second.candidate);
    expect(await page.getByTestId('release-row').count()).toBe(2);
  });
});
