import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRewardValue } from '@agl/core/transitions';
import { SqliteStore } from '@agl/store/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../src/index';

const AGENT = fileURLToPath(new URL('./fixtures/crashy-agent.ts', import.meta.url));

async function waitFor(check: () => boolean, what: string, seconds = 60): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Runner worker processes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agl-kill-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it(
    'a worker process killed mid-rollout leaves an unresponsive attempt, which is retried and finishes',
    { timeout: 120_000 },
    async () => {
      const store = new SqliteStore({ path: join(dir, 'store.sqlite'), scanDebounceSeconds: 0 });
      const marker = join(dir, 'hung.pid');
      const warnings: string[] = [];
      let runner: Runner | undefined;
      let running: Promise<unknown> | undefined;
      try {
        const hung = await store.enqueueRollout({
          input: { hangOnceMarker: marker },
          config: { unresponsiveSeconds: 3, maxAttempts: 2, retryCondition: ['unresponsive'] },
        });
        const plain = await store.enqueueRollouts([{ input: {} }, { input: {} }]);
        runner = new Runner({
          store,
          workerMode: 'process',
          agentModule: { path: AGENT },
          nWorkers: 2,
          heartbeatIntervalSeconds: 0.2,
          pollIntervalSeconds: 0.05,
          logger: { warn: (m) => warnings.push(m) },
        });
        running = runner.run();
        await waitFor(() => existsSync(marker) && readFileSync(marker, 'utf8') !== '', 'the agent to hang');
        const pid = Number(readFileSync(marker, 'utf8'));
        expect(pid).not.toBe(process.pid);
        process.kill(pid, 'SIGKILL');
        const ids = [hung.rolloutId, ...plain.map((r) => r.rolloutId)];
        const done = await store.waitForRollouts(ids, { timeoutSeconds: 60 });
        runner.stop();
        await running;
        expect(done.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
        const attempts = (await store.queryAttempts({ rolloutId: hung.rolloutId })).items;
        expect(attempts.map((a) => a.status)).toEqual(['unresponsive', 'succeeded']);
        const spans = (await store.querySpans({ rolloutId: hung.rolloutId, attemptId: attempts[1]!.attemptId })).items;
        expect(spans.map(getRewardValue).filter((v) => v !== null)).toEqual([1]);
        expect(warnings.some((w) => w.includes('exited') && w.includes('replacement'))).toBe(true);
        expect(runner.stats.succeeded).toBe(3);
      } finally {
        runner?.stop();
        await running;
        await store.close();
      }
    },
  );
});
