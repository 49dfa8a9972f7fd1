import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SOURCE_NODE_FLAGS } from '@agl/testing';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { describe, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./__fixtures__/exit-child.ts', import.meta.url));

/** Runs the child; with `signal`, sends it once the child printed its rollout id. */
function runChild(
  storeUrl: string,
  mode: string,
  signal?: NodeJS.Signals,
): Promise<{ rolloutId: string; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, CHILD, mode], {
      env: { ...process.env, AGL_STORE_URL: storeUrl, AGL_ROLLOUT_ID: '', AGL_ATTEMPT_ID: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (signal && stdout.includes('\n')) child.kill(signal);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, sig) => resolve({ rolloutId: stdout.trim(), code, signal: sig, stderr }));
  });
}

describe('a service process that ends flushes what it recorded', () => {
  for (const [mode, signal] of [
    ['beforeExit', undefined],
    ['sigterm', 'SIGTERM'],
  ] as const) {
    it(`on ${signal ?? mode}`, async () => {
      const store = new MemoryStore();
      const server = await createStoreServer({ store, port: 0 });
      try {
        const run = await runChild(server.url, mode, signal);
        expect(run.rolloutId, run.stderr).toMatch(/^ro-/);
        if (signal) expect(run.signal).toBe(signal);
        else expect(run.code).toBe(0);
        expect(await store.getRolloutById(run.rolloutId)).toMatchObject({ status: 'succeeded', input: mode });
        const spans = (await store.querySpans({ rolloutId: run.rolloutId })).items;
        expect(spans.map((s) => s.attributes['gen_ai.prompt.0.content'])).toEqual([`exit-${mode}`]);
      } finally {
        await server.close();
      }
    });
  }
});
