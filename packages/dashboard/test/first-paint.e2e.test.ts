import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '@agl/store/sqlite';
import { isCi } from '@agl/testing';
import { ensureDashboardBuilt, findChromium, serveStore, type ServedStore } from './e2e-support';

/**
 * The dashboard's first paint: the page fetches its data at once (in parallel with the store check), so neither a plain
 * headless capture nor a browser watching every DOM change from the first byte ever sees a "Connecting…" screen, and
 * the first data (the rollouts list) shows without waiting for anything else.
 */
const CHROMIUM = findChromium();
const TOKEN = 'first-paint-token';

describe.skipIf(CHROMIUM === null && !isCi())('dashboard first paint (chromium + agl store serve)', () => {
  let dir: string;
  let served: ServedStore;
  let browser: Browser;
  let rolloutId: string;

  beforeAll(async () => {
    expect(CHROMIUM, 'CI=true but `chromium` is not installed').not.toBeNull();
    ensureDashboardBuilt();
    dir = await mkdtemp(join(tmpdir(), 'agl-first-paint-'));
    const db = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path: db });
    const r = await store.startRollout({ input: { q: 'first paint' }, mode: 'train' });
    await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
    rolloutId = r.rolloutId;
    await store.close();
    served = await serveStore(db, TOKEN);
    browser = await chromium.launch({
      executablePath: CHROMIUM!,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a plain headless capture (chromium --headless --dump-dom) shows the page, not "Connecting…"', () => {
    const profile = join(dir, 'profile');
    const dumped = spawnSync(
      CHROMIUM!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${profile}`,
        '--dump-dom',
        `${served.url}/?token=${TOKEN}`,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(dumped.stdout, dumped.stderr).toContain('class="app"');
    expect(dumped.stdout).not.toContain('Connecting');
  }, 90_000);

  it('from the first DOM change on, the page never shows "Connecting…", and its first data arrives at once', async () => {
    const page = await browser.newPage();
    // Watch every text the document ever holds, from before the app's first render.
    await page.addInitScript(() => {
      const seen = { connecting: false };
      (window as unknown as { __aglSeen: typeof seen }).__aglSeen = seen;
      new MutationObserver(() => {
        if (document.body?.innerText.includes('Connecting')) seen.connecting = true;
      }).observe(document, { childList: true, subtree: true, characterData: true });
    });
    await page.goto(`${served.url}/?token=${TOKEN}`, { waitUntil: 'domcontentloaded' });
    await page.getByText(rolloutId).first().waitFor({ timeout: 30_000 });
    const seen = await page.evaluate(() => (window as unknown as { __aglSeen: { connecting: boolean } }).__aglSeen);
    expect(seen.connecting).toBe(false);
    await page.close();
  }, 90_000);
});
