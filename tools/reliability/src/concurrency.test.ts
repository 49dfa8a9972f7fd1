import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@agl/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomInt } from './harness/random-int';
import { startStoreProcess, type StoreProcess } from './harness/store-process';

const DEQUEUERS = 200;
const ROLLOUTS = 600;

async function post(url: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}/v1/agl${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

describe('concurrency: 200 concurrent dequeuers over HTTP, two server processes on one SQLite file', () => {
  let dir: string;
  const servers: StoreProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agl-dequeue-'));
    const dbPath = join(dir, 'agl.sqlite');
    servers.push(await startStoreProcess({ dbPath }));
    servers.push(await startStoreProcess({ dbPath }));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands each rollout out exactly once, and every rollout is handed out', async () => {
    const enqueued: string[] = [];
    for (let i = 0; i < ROLLOUTS; i += 200) {
      const rollouts = Array.from({ length: 200 }, (_, j) => ({ input: { i: i + j } }));
      const { status, json } = await post(servers[i % 2]!.url, '/queues/rollouts/enqueue', { rollouts });
      expect(status).toBe(201);
      enqueued.push(...(json as { rollout_id: string }[]).map((r) => r.rollout_id));
    }

    const handedOut: { rolloutId: string; workerId: string; attemptSequence: number }[] = [];
    const statuses: number[] = [];
    let start!: () => void;
    const go = new Promise<void>((resolve) => (start = resolve));
    const dequeuers = Array.from({ length: DEQUEUERS }, async (_, n) => {
      const random = seededRandom(n + 1);
      const url = servers[n % 2]!.url;
      const workerId = `worker-${n}`;
      await go;
      for (;;) {
        const { status, json } = await post(url, '/queues/rollouts/dequeue', {
          limit: randomInt(random, 1, 4),
          worker_id: workerId,
        });
        statuses.push(status);
        if (status !== 200) return;
        const claimed = json as { rollout_id: string; attempt: { sequence_id: number; worker_id: string } }[];
        if (claimed.length === 0) return;
        for (const r of claimed)
          handedOut.push({
            rolloutId: r.rollout_id,
            workerId: r.attempt.worker_id,
            attemptSequence: r.attempt.sequence_id,
          });
      }
    });
    start();
    await Promise.all(dequeuers);

    expect(statuses.every((s) => s === 200)).toBe(true);
    const counts = new Map<string, number>();
    for (const h of handedOut) counts.set(h.rolloutId, (counts.get(h.rolloutId) ?? 0) + 1);
    const twice = [...counts].filter(([, c]) => c > 1);
    expect(twice, 'rollouts handed out more than once').toEqual([]);
    expect(new Set(counts.keys())).toEqual(new Set(enqueued));
    expect(handedOut.every((h) => h.attemptSequence === 1 && h.workerId.startsWith('worker-'))).toBe(true);
    // The work really was spread: many dequeuers got something.
    expect(new Set(handedOut.map((h) => h.workerId)).size).toBeGreaterThan(DEQUEUERS / 4);

    const { json } = await post(servers[0]!.url, '/rollouts/search', { status_in: ['queuing'], limit: 1 });
    expect((json as { total: number }).total).toBe(0);
  });
});
