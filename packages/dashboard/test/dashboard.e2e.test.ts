import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFinalReward } from '@agl/core/transitions';
import { Span, parseWire } from '@agl/core/schema';
import {
  isCi,
  roomSelectorRuleLlm,
  startOpenAiTestServer,
  trainRoomSelectorExample,
  type OpenAiTestServer,
} from '@agl/testing';
import { PACKAGE_DIR, ensureDashboardBuilt, findChromium, serveStore, type ServedStore } from './e2e-support';

/**
 * End to end: a real APO training run (examples/apo-room-selector against the rule-based OpenAI-compatible test
 * server) fills a SQLite store; `agl store serve` serves it with the built dashboard; headless Chromium (Debian's
 * `chromium`, driven by playwright-core) opens every page and checks what it shows against the store's own answers.
 */
const CHROMIUM = findChromium();
const IN_CI = isCi();
const TOKEN = 'e2e-dashboard-token';
const ARTIFACTS = join(PACKAGE_DIR, 'test-artifacts');
const DOCS = join(PACKAGE_DIR, 'docs');

if (CHROMIUM === null && !IN_CI) {
  console.warn(
    'dashboard e2e skipped: no `chromium` on PATH. Install it with tools/ci/install-chromium.sh (apt-get install -y chromium).',
  );
}

describe.skipIf(CHROMIUM === null && !IN_CI)('dashboard end to end (chromium + agl store serve + APO run)', () => {
  let dir: string;
  let llm: OpenAiTestServer;
  let served: ServedStore;
  let browser: Browser;
  let page: Page;

  const api = async <T = Record<string, unknown>>(path: string): Promise<T> => {
    const res = await fetch(`${served.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };
  const requireChromium = () =>
    expect(
      CHROMIUM,
      'CI=true but `chromium` is not installed: run tools/ci/install-chromium.sh (apt-get install -y chromium).',
    ).not.toBeNull();
  const shot = async (name: string, docs = false) => {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    if (docs && process.env.AGL_DASHBOARD_DOCS === '1')
      await copyFile(join(ARTIFACTS, `${name}.png`), join(DOCS, `${name}.png`));
  };

  beforeAll(async () => {
    if (CHROMIUM === null) return; // CI=true without chromium: every test fails below.
    await mkdir(ARTIFACTS, { recursive: true });
    ensureDashboardBuilt();
    dir = await mkdtemp(join(tmpdir(), 'agl-dashboard-e2e-'));
    llm = await startOpenAiTestServer({ respond: roomSelectorRuleLlm });
    const train = await trainRoomSelectorExample({ baseURL: llm.baseURL, dir, apiKey: 'sk-e2e-test-key-0001' });
    expect(train.code, train.stderr).toBe(0);
    served = await serveStore(join(dir, 'store.sqlite'), TOKEN);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await llm?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves the app at / without a token while the API still needs one', async () => {
    requireChromium();
    expect(served.lines.join('\n')).toMatch(/^AGL_STORE_URL=/);
    await expect
      .poll(() => served.lines.find((l) => l.startsWith('Dashboard:')))
      .toBe(`Dashboard: ${served.url}/ (the API is at ${served.url}/v1/agl)`);
    const index = await fetch(`${served.url}/`);
    expect(index.status).toBe(200);
    const html = await index.text();
    expect(html).toContain('<div id="root">');
    // The page names its icon, so browsers do not ask for a missing /favicon.ico.
    expect(html).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg" />');
    const icon = await fetch(`${served.url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect((await fetch(`${served.url}/v1/agl/rollouts`)).status).toBe(401);
  });

  it("asks for the token once, then the rollouts table's total equals the store's count", async () => {
    requireChromium();
    await page.goto(`${served.url}/`);
    await page.getByTestId('token-form').waitFor();
    await page.getByLabel('Store token').fill(TOKEN);
    await page.getByRole('button', { name: 'Connect' }).click();
    const stats = await api<{ total_rollouts: number }>('/v1/agl/statistics');
    expect(stats.total_rollouts).toBeGreaterThan(50);
    await expect.poll(() => page.getByTestId('rollouts-total').textContent()).toBe(String(stats.total_rollouts));
    // The banner names the file the server serves.
    await expect.poll(() => page.getByTestId('store-label').textContent()).toBe(join(dir, 'store.sqlite'));
    expect(await page.getByTestId('rollout-row').count()).toBe(25);
    await shot('rollouts', true);
    // Reload: the token comes from sessionStorage, no second prompt.
    await page.reload();
    await page.getByTestId('rollouts-table').waitFor();
    expect(await page.getByTestId('token-form').count()).toBe(0);
  });

  it('opens a rollout: its reward equals the stored reward and the waterfall has one bar per span', async () => {
    requireChromium();
    await page.getByRole('button', { name: /^Reward/ }).click();
    await expect.poll(() => page.getByTestId('rollout-reward').first().textContent()).toBe('1');
    const link = page.getByTestId('rollout-link').first();
    const rolloutId = (await link.textContent())!;
    await link.click();
    await page.getByTestId('detail-reward').waitFor();

    const latest = await api<{ attempt_id: string }>(`/v1/agl/rollouts/${rolloutId}/attempts/latest`);
    const spans = await api<{ items: unknown[]; total: number }>(
      `/v1/agl/spans?rollout_id=${rolloutId}&attempt_id=${latest.attempt_id}&sort_by=sequence_id`,
    );
    const stored = findFinalReward(spans.items.map((s) => parseWire(Span, 'span', s, 'span')));
    expect(stored).not.toBeNull();
    expect(Number(await page.getByTestId('detail-reward').textContent())).toBe(stored);
    await expect.poll(() => page.getByTestId('waterfall-bar').count()).toBe(spans.total);
    expect(await page.getByTestId('reward-marker').textContent()).toContain(String(stored));

    await page.locator('[data-testid="waterfall-row"][data-kind="llm"]').first().click();
    const detail = page.getByTestId('span-detail');
    expect(await detail.getByTestId('prompt-message').count()).toBeGreaterThan(0);
    expect(await detail.getByTestId('response-message').count()).toBeGreaterThan(0);
    await detail.getByTestId('toggle-raw').click();
    expect(await page.getByTestId('raw-attributes').textContent()).toContain('gen_ai.prompt.0.role');
    await shot('traces', true);
  });

  it('shows reward cards and charts that match the reward series', async () => {
    requireChromium();
    await page.getByRole('link', { name: 'Rewards' }).click();
    await page.getByTestId('reward-card-train').waitFor();
    const series = await api<{ overall: Record<string, { mean: number }> }>('/v1/agl/ext/rewards');
    const mean = Math.round(series.overall.train!.mean * 1000) / 1000;
    expect(await page.getByTestId('reward-card-train').textContent()).toContain(String(mean));
    expect(await page.locator('figure .recharts-wrapper').count()).toBe(5);
    await shot('rewards', true);
  });

  it('lists every resources version, switches versions and diffs them, with the API key masked', async () => {
    requireChromium();
    await page.getByRole('link', { name: 'Resources' }).click();
    const resources = await api<{ total: number; items: Array<{ resources_id: string; resources: unknown }> }>(
      '/v1/agl/resources?sort_by=update_time',
    );
    await expect.poll(() => page.getByTestId('version-row').count()).toBe(resources.total);
    const first = resources.items[0]!.resources_id;
    await page.getByTestId('version-row').first().click();
    await expect.poll(() => page.getByTestId('selected-version').textContent()).toBe(first);
    expect(await page.getByTestId('api-key').first().textContent()).toBe('••••0001');
    expect(await page.content()).not.toContain('sk-e2e-test-key');
    // A version whose resources differ from the one before it (APO's edits depend on which rollouts failed, so which
    // versions differ, and whether lines were added or removed, varies from run to run): its diff shows the change.
    const changed = resources.items.findIndex(
      (v, i) => i > 0 && JSON.stringify(v.resources) !== JSON.stringify(resources.items[i - 1]!.resources),
    );
    expect(changed, `the APO run published ${resources.total} versions with the same resources`).toBeGreaterThan(0);
    await page.getByTestId('version-row').nth(changed).click();
    await expect
      .poll(() => page.getByTestId('selected-version').textContent())
      .toBe(resources.items[changed]!.resources_id);
    await expect
      .poll(async () => (await page.getByTestId('diff-add').count()) + (await page.getByTestId('diff-del').count()))
      .toBeGreaterThan(0);
    await shot('resources', true);
  });

  it('lists the runners of the training run', async () => {
    requireChromium();
    await page.getByRole('link', { name: 'Runners' }).click();
    const workers = await api<{ total: number }>('/v1/agl/workers');
    expect(workers.total).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('runner-row').count()).toBe(workers.total);
    expect(await page.getByTestId('heartbeat-age').first().textContent()).toMatch(/ago$/);
    await shot('runners');
  });
});
