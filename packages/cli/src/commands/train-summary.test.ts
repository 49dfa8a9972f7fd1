import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFeedback } from '@agl/core/store';
import { SqliteStore } from '@agl/store/sqlite';
import { runAglFromSource, startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';

const ENTRY = resolve(import.meta.dirname, '__fixtures__/train-entry.ts');

let llm: OpenAiTestServer;
let dir: string;
beforeAll(async () => {
  llm = await startOpenAiTestServer();
  dir = mkdtempSync(join(tmpdir(), 'agl-train-summary-'));
});
afterAll(async () => {
  await llm.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("agl train's summary counts only the rollouts it made", () => {
  it('after 30 unrelated production rollouts (reward 0) it reports its own 5 and their mean', async () => {
    const db = join(dir, 'store.sqlite');
    const store = new SqliteStore({ path: db });
    for (let i = 0; i < 30; i++) {
      const r = await store.startRollout({ input: { q: i }, mode: null, metadata: { source: 'production' } });
      await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
      await recordFeedback(store, r.rolloutId, 0);
    }
    await store.close();

    const env = { CI: '1', TEST_LLM_URL: llm.baseURL, AGL_STORE_URL: '', AGL_STORE_TOKEN: '' };
    const run = await runAglFromSource(['train', ENTRY, '--store', db, '--no-progress'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^agl train: 5 rollouts in [\d.]+s: 4 succeeded, 1 failed; mean final reward 1\.000\.$/mu,
    );

    const json = await runAglFromSource(['train', ENTRY, '--store', db, '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const result = JSON.parse(json.stdout.trim().split('\n').at(-1)!) as { progress: Record<string, unknown> };
    expect(result.progress).toMatchObject({ total: 5, succeeded: 4, failed: 1, meanReward: 1 });

    const reopened = new SqliteStore({ path: db });
    try {
      expect((await reopened.queryRollouts({})).total).toBe(40);
    } finally {
      await reopened.close();
    }
  }, 180_000);
});
