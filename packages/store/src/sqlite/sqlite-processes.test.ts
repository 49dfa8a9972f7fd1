import { execFile, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempFileEachTest } from '../__fixtures__/temp-file';
import { SqliteStore } from './index';

const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
const nodeArgs = (script: string, ...args: string[]) => [
  '--conditions=@agl/source',
  '--import',
  'tsx',
  join(here, '__fixtures__', script),
  ...args,
];

/** Runs a fixture script in a fresh Node process; resolves with its stdout. */
async function child(script: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, nodeArgs(script, ...args), { cwd: here, timeout: 60_000 });
  return stdout;
}

/** Runs a script that kills itself; resolves with its stdout and the signal. */
function crashingChild(script: string, ...args: string[]): Promise<{ stdout: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, nodeArgs(script, ...args), {
      cwd: here,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (_code, signal) => resolve({ stdout, signal }));
  });
}

describe('SqliteStore across processes', { timeout: 90_000 }, () => {
  const tmp = tempFileEachTest('agl-sqlite-proc-', 'shared.sqlite');

  it('a new process finds every rollout and span acknowledged by a process that was killed', async () => {
    const { stdout, signal } = await crashingChild('write-then-crash.ts', tmp.path);
    expect(signal).toBe('SIGKILL');
    const acks = stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('ACK '))
      .map((l) => JSON.parse(l.slice(4)) as Record<string, unknown>);
    expect(acks).toHaveLength(2);
    const { rollouts } = acks[0] as { rollouts: string[] };
    const { claimed, spans } = acks[1] as { claimed: string; spans: string[] };
    expect(spans).toHaveLength(50);

    const dump = JSON.parse((await child('dump.ts', tmp.path)).trim()) as {
      rollouts: Array<[string, string]>;
      spans: Record<string, string[]>;
      resources: { resourcesId: string; version: number } | null;
      worker: { status: string; currentRolloutId: string } | null;
      journal: string;
    };
    expect(dump.rollouts.map(([id]) => id)).toEqual(rollouts);
    expect(dump.rollouts.find(([id]) => id === claimed)?.[1]).toBe('running');
    expect(dump.spans[claimed]).toEqual(spans);
    expect(dump.resources).toMatchObject({ resourcesId: 'main', version: 1 });
    expect(dump.worker).toMatchObject({ status: 'busy', currentRolloutId: claimed });
    expect(dump.journal).toBe('wal');

    // The queue survived too: the 19 unclaimed rollouts come out in order, in this process.
    const store = new SqliteStore({ path: tmp.path });
    const rest = await store.dequeueRollouts({ limit: 100 });
    expect(rest.map((r) => r.rolloutId)).toEqual(rollouts.filter((id) => id !== claimed));
    expect(await store.getNextSpanSequenceId(claimed, 'any')).toBe(51);
    await store.close();
  });

  it('two processes dequeuing from one file claim each rollout exactly once', async () => {
    const store = new SqliteStore({ path: tmp.path });
    const made = await store.enqueueRollouts(Array.from({ length: 100 }, (_, i) => ({ input: i })));
    const [a, b] = await Promise.all([
      child('dequeue-all.ts', tmp.path, 'proc-a', 'proc-b'),
      child('dequeue-all.ts', tmp.path, 'proc-b', 'proc-a'),
    ]);
    const claimedA = JSON.parse(a.trim()) as string[];
    const claimedB = JSON.parse(b.trim()) as string[];
    const all = [...claimedA, ...claimedB];
    expect(all).toHaveLength(100);
    expect(claimedA.length).toBeGreaterThan(0);
    expect(claimedB.length).toBeGreaterThan(0);
    expect(new Set(all)).toEqual(new Set(made.map((r) => r.rolloutId)));
    // Each process saw its own claims in FIFO order.
    const order = new Map(made.map((r, i) => [r.rolloutId, i]));
    for (const list of [claimedA, claimedB]) {
      const idx = list.map((id) => order.get(id)!);
      expect(idx).toEqual([...idx].sort((x, y) => x - y));
    }
    const stats = await store.statistics();
    expect(stats).toMatchObject({ totalRollouts: 100, totalAttempts: 100, totalSpans: 100 });
    expect((await store.queryRollouts({ statusIn: ['succeeded'] })).total).toBe(100);
    await store.close();
  });

  it('waitForRollouts sees rollouts finished by another process (bounded polling)', async () => {
    const store = new SqliteStore({ path: tmp.path, waitPollIntervalMs: 50 });
    const a = await store.startRollout({ input: 'a' });
    const b = await store.startRollout({ input: 'b' });
    const waiting = store.waitForRollouts([a.rolloutId, b.rolloutId], { timeoutSeconds: 60 });
    await child('finish-all.ts', tmp.path, a.rolloutId, b.rolloutId);
    const done = await waiting;
    expect(done.map((r) => [r.rolloutId, r.status])).toEqual([
      [a.rolloutId, 'succeeded'],
      [b.rolloutId, 'succeeded'],
    ]);
    await store.close();
  });
});
