import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFeedback, recordRewardSpan } from '@agl/core/store';
import { SqliteStore } from '@agl/store/sqlite';
import { isCi } from '@agl/testing';
import { ensureDashboardBuilt, findChromium, serveStore, type ServedStore } from './e2e-support';

/**
 * End to end for live traffic: a SQLite store seeded with production rollouts (mode null, `metadata.source`,
 * `metadata.agent_name`, agent rewards, failures, feedback), served by `agl store serve` with the built dashboard and
 * driven in headless Chromium: the token from the URL, the traffic chart's counts, the filters, and late feedback.
 */
const CHROMIUM = findChromium();
const TOKEN = 'live-traffic-token';
const HOUR = 3600;
/** Three hours ago, on the hour: the seeded traffic lies in [T0, T0 + 3h). */
const T0 = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 3 * HOUR;

describe.skipIf(CHROMIUM === null && !isCi())('live traffic in the dashboard (chromium + agl store serve)', () => {
  let dir: string;
  let served: ServedStore;
  let browser: Browser;
  let page: Page;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    expect(CHROMIUM, 'CI=true but `chromium` is not installed').not.toBeNull();
    ensureDashboardBuilt();
    dir = await mkdtemp(join(tmpdir(), 'agl-live-traffic-'));
    const db = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path: db });
    const live = async (
      name: string,
      at: number,
      metadata: Record<string, string>,
      outcome: { failed?: boolean; reward?: number; feedback?: number } = {},
    ) => {
      const r = await store.startRollout({ input: { q: name }, mode: null, metadata, startTime: at });
      if (outcome.reward !== undefined)
        await recordRewardSpan(store, r.rolloutId, {
          'agentlightning.reward.0.name': 'primary',
          'agentlightning.reward.0.value': outcome.reward,
        });
      await store.updateAttempt(r.rolloutId, r.attempt.attemptId, {
        status: outcome.failed ? 'failed' : 'succeeded',
        endTime: at + 1,
      });
      if (outcome.feedback !== undefined) await recordFeedback(store, r.rolloutId, outcome.feedback);
      ids[name] = r.rolloutId;
    };
    const bot = { source: 'production', agent_name: 'bot' };
    await live('a', T0 + 60, bot, { reward: 1 });
    await live('b', T0 + 120, bot, { reward: 0, feedback: 1 });
    await live('c', T0 + 180, bot, { failed: true });
    await live('late', T0 + 240, bot, { reward: 0 });
    await live('d', T0 + 2 * HOUR + 5, { source: 'production', agent_name: 'other' }, { feedback: 0.5 });
    await live('e', T0 + 2 * HOUR + 10, { source: 'unscoped' });
    // A training rollout (APO's train/val rollouts look like this): not a request.
    const train = await store.startRollout({ input: { q: 'train' }, mode: 'train', startTime: T0 + 30 });
    await recordRewardSpan(store, train.rolloutId, {
      'agentlightning.reward.0.name': 'primary',
      'agentlightning.reward.0.value': 0.1,
    });
    await store.updateAttempt(train.rolloutId, train.attempt.attemptId, { status: 'succeeded', endTime: T0 + 31 });
    await store.close();
    served = await serveStore(db, TOKEN);
    browser = await chromium.launch({
      executablePath: CHROMIUM!,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('takes the token from ?token= once, stores it and removes it from the URL', async () => {
    await page.goto(`${served.url}/traffic?token=${TOKEN}&since=${T0}&until=${T0 + 3 * HOUR}`);
    await page.getByTestId('traffic-totals').waitFor();
    expect(page.url()).not.toContain('token=');
    expect(page.url()).toContain(`since=${T0}`);
    expect(await page.evaluate(() => window.sessionStorage.getItem('agl.dashboard.token'))).toBe(TOKEN);
    expect(await page.getByTestId('token-form').count()).toBe(0);
    await page.reload();
    await page.getByTestId('traffic-totals').waitFor();
    expect(await page.getByTestId('token-form').count()).toBe(0);
  });

  it('charts the seeded counts per hour, and the filters change the list', async () => {
    await expect.poll(() => page.getByTestId('traffic-total-count').textContent()).toBe('6');
    expect(await page.getByTestId('traffic-total-feedback').textContent()).toBe('2');
    await page.locator('summary', { hasText: 'Per hour' }).click();
    const buckets = await page.getByTestId('traffic-bucket').allTextContents();
    expect(buckets).toHaveLength(2);
    // hour 0: 4 requests, 1 failed, 1 feedback, mean reward (1 + 1 + 0) / 3; hour 2: 2 requests, 0 failed, 1 feedback, 0.5.
    expect(buckets[0]).toMatch(/^\d\d-\d\d \d\d:00 ?4 ?1 ?1 ?0\.667$/u);
    expect(buckets[1]).toMatch(/^\d\d-\d\d \d\d:00 ?2 ?0 ?1 ?0\.5$/u);
    expect(await page.getByTestId('traffic-chart').locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(6);

    await page.getByLabel('Feedback filter').selectOption('with');
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(2);
    await expect.poll(() => page.getByTestId('traffic-total-count').textContent()).toBe('2');
    await page.getByLabel('Feedback filter').selectOption('');
    await page.getByLabel('Agent filter').selectOption('bot');
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(4);
    await page.getByLabel('Minimum reward').fill('0.5');
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(2); // a (1) and b (feedback 1)
    await page.getByLabel('Minimum reward').fill('');
    await page.getByLabel('Agent filter').selectOption('');
    await page.getByLabel('Source filter').selectOption('unscoped');
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(1);
  });

  it('shows production sources over the span of the data by default, with all sources one click away', async () => {
    const isTraffic = (r: { url(): string }) => new URL(r.url()).pathname === '/v1/agl/ext/traffic';
    const first = page.waitForResponse(isTraffic);
    await page.goto(`${served.url}/traffic`);
    const res = await first;
    const asked = new URL(res.url()).searchParams;
    expect(asked.get('since')).toBeNull();
    expect(asked.get('scope')).toBe('production');
    const body = (await res.json()) as { since: number; fitted: boolean; scope: string; buckets: unknown[] };
    // The data starts 3 hours ago: the window is those hours, not 7 days with one bar at the edge.
    expect(body).toMatchObject({ scope: 'production', fitted: true, since: T0 });
    // One bucket per hour from T0's hour to now's (4, or 5 when the hour turned after the file was loaded).
    expect(body.buckets.length).toBeLessThanOrEqual(Math.floor((Date.now() / 1000 - T0) / HOUR) + 1);
    await expect.poll(() => page.getByTestId('traffic-total-count').textContent()).toBe('6');
    expect(await page.getByTestId('traffic-scope-production').getAttribute('aria-pressed')).toBe('true');
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(6);
    await page.getByTestId('traffic-scope-all').click();
    await expect.poll(() => page.getByTestId('traffic-total-count').textContent()).toBe('7');
    await expect.poll(() => page.getByTestId('traffic-rollout-row').count()).toBe(7);
    expect(await page.getByTestId('traffic-scope-all').getAttribute('aria-pressed')).toBe('true');
  });

  it('shows late feedback at once on a rollout page that was already shown', async () => {
    await page.goto(`${served.url}/rollouts/${ids.late}`);
    await expect.poll(() => page.getByTestId('detail-reward').textContent()).toBe('0');
    await page.getByTestId('feedback-empty').waitFor();
    const res = await fetch(`${served.url}/v1/agl/rollouts/${ids.late}/feedback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reward: 1, comment: 'solved it', dimensions: { tone: 0.5 } }),
    });
    expect(res.status).toBe(201);
    // The page polls every 5 s; the server's summary cache must not hide the new reward.
    await expect.poll(() => page.getByTestId('detail-reward').textContent(), { timeout: 15_000 }).toBe('1');
    const row = await page.getByTestId('feedback-row').textContent();
    expect(row).toContain('solved it');
    expect(row).toContain('tone=0.5');
  });
});
