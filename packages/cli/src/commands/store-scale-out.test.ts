import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRewardValue } from '@agl/core/transitions';
import type { LightningStore } from '@agl/core/store';
import { StoreClient } from '@agl/store/client';
import { PostgresStore } from '@agl/store/postgres';
import { Runner } from '@agl/trainer';
import { postgresTestEnv } from '@agl/testing';

// Several `agl store serve --db postgres://…` processes on one database (DESIGN.md "Scale-out path"): runners on
// different servers, one algorithm, every rollout exactly once; and a server killed with SIGKILL mid-run.
// Needs AGL_TEST_PG_URL (eval "$(tools/ci/start-postgres.sh)"): skipped with a message outside CI, a failure in CI.

const ROOT = resolve(import.meta.dirname, '../../../..');
const BIN = 'packages/cli/src/bin.ts';
const {
  url: PG_URL,
  problem: PROBLEM,
  enabled: ENABLED,
} = await postgresTestEnv((config) => new pg.Client(config), 'multi-server PostgreSQL tests');

interface Served {
  child: ChildProcess;
  url: string;
  stderr: string[];
}

async function serve(db: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    ['--conditions=@agl/source', '--import', 'tsx', BIN, 'store', 'serve', '--port', '0', '--db', db, '--no-dashboard'],
    {
      cwd: ROOT,
      env: { ...process.env, AGL_STORE_TOKEN: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const url = await new Promise<string>((resolveUrl, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^AGL_STORE_URL=(.+)$/.exec(line);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`agl store serve exited early (${code}): ${stderr.join('\n')}`)));
  });
  return { child, url, stderr };
}

const quiet = { warn: () => undefined };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Wraps a store so every acknowledged span write and attempt finish is recorded. */
function recording(store: StoreClient, acked: { spans: Set<string>; finished: Set<string> }): LightningStore {
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const result = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        if (prop === 'addSpan' || prop === 'addSpans') {
          const spans = prop === 'addSpan' ? [args[0]] : (args[0] as unknown[]);
          for (const s of spans as Array<{ rolloutId: string; attemptId: string; spanId: string }>)
            acked.spans.add(`${s.rolloutId}/${s.attemptId}/${s.spanId}`);
        }
        if (prop === 'updateAttempt' && (args[2] as { status?: string }).status === 'succeeded')
          acked.finished.add(args[0] as string);
        return result;
      };
    },
  }) as unknown as LightningStore;
}

describe.runIf(ENABLED)('several agl store serve processes on one PostgreSQL database', () => {
  const schema = `scale_${randomBytes(5).toString('hex')}`;
  const db = `${PG_URL}?schema=${schema}`;
  const servers: Served[] = [];
  let check: PostgresStore;

  beforeAll(async () => {
    if (PROBLEM !== null) return; // every test below then fails (CI): never a silent skip
    servers.push(await serve(db), await serve(db));
    check = await PostgresStore.open({ connectionString: db });
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await check?.close();
    if (PROBLEM !== null) return;
    const raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    await raw.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await raw.end();
  });

  it('PostgreSQL is reachable at AGL_TEST_PG_URL (CI starts it with tools/ci/start-postgres.sh)', () => {
    expect(PROBLEM).toBeNull();
  });

  it('a runner on each server, one algorithm: every rollout runs exactly once', async () => {
    const [a, b] = servers as [Served, Served];
    expect(a && b, `no servers: ${PROBLEM}`).toBeTruthy();
    const calls = new Map<number, number>();
    const agent = async (task: { i: number }): Promise<number> => {
      calls.set(task.i, (calls.get(task.i) ?? 0) + 1);
      await sleep(5);
      return 1;
    };
    const clients = [a, b].map((s) => new StoreClient({ url: s.url }));
    const runners = clients.map(
      (store) => new Runner({ store, agent: agent as never, nWorkers: 3, pollIntervalSeconds: 0.05, logger: quiet }),
    );
    const algorithm = new StoreClient({ url: a.url });
    const started = performance.now();
    const running = runners.map((r) => r.run());
    const rollouts = await algorithm.enqueueRollouts(
      Array.from({ length: 60 }, (_, i) => ({ input: { i }, mode: 'train' as const })),
    );
    const done = await algorithm.waitForRollouts(
      rollouts.map((r) => r.rolloutId),
      { timeoutSeconds: 60 },
    );
    const seconds = (performance.now() - started) / 1000;
    for (const r of runners) r.stop();
    await Promise.all(running);
    console.log(
      `[agl] 2 servers, 2 runners × 3 workers: ${rollouts.length} rollouts in ${seconds.toFixed(2)} s (${(rollouts.length / seconds).toFixed(1)} rollouts/s)`,
    );

    expect(done.map((r) => r.status)).toEqual(rollouts.map(() => 'succeeded'));
    expect([...calls.keys()].sort((x, y) => x - y)).toEqual(rollouts.map((_, i) => i));
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
    expect(runners.every((r) => r.stats.started > 0)).toBe(true);
    expect(runners[0]!.stats.started + runners[1]!.stats.started).toBe(60);
    const stats = await check.statistics();
    expect(stats.totalAttempts).toBe(60);
    for (const r of rollouts.slice(0, 10)) {
      const spans = (await check.querySpans({ rolloutId: r.rolloutId })).items;
      expect(spans.map(getRewardValue).filter((v) => v !== null)).toEqual([1]);
    }
    for (const c of [...clients, algorithm]) await c.close();
  }, 90_000);

  it('kill -9 of one server mid-run: its runner fails over to the other, nothing acknowledged is lost', async () => {
    const [a, b] = servers as [Served, Served];
    expect(a && b, `no servers: ${PROBLEM}`).toBeTruthy();
    const acked = { spans: new Set<string>(), finished: new Set<string>() };
    const agent = async (): Promise<number> => {
      await sleep(30);
      return 1;
    };
    const clientA = new StoreClient({ url: `${a.url},${b.url}`, retryDelays: [0.2, 0.5, 1], healthRetryDelays: [0.1] });
    const clientB = new StoreClient({ url: `${b.url},${a.url}`, retryDelays: [0.2, 0.5, 1], healthRetryDelays: [0.1] });
    const runners = [clientA, clientB].map(
      (c) =>
        new Runner({
          store: recording(c, acked),
          agent: agent as never,
          nWorkers: 2,
          pollIntervalSeconds: 0.05,
          heartbeatIntervalSeconds: 1,
          logger: quiet,
        }),
    );
    const algorithm = new StoreClient({ url: `${b.url},${a.url}` });
    // A claim whose answer dies with the server is retried by the watchdog after the timeout (AGL's retry rules).
    const config = { timeoutSeconds: 5, maxAttempts: 3, retryCondition: ['timeout' as const, 'unresponsive' as const] };
    const rollouts = await algorithm.enqueueRollouts(Array.from({ length: 50 }, (_, i) => ({ input: { i }, config })));
    const running = runners.map((r) => r.run());
    const waitUntil = Date.now() + 30_000;
    while (runners[0]!.stats.succeeded < 8 && Date.now() < waitUntil) await sleep(20);
    expect(runners[0]!.stats.succeeded).toBeGreaterThanOrEqual(8);
    const beforeKill = runners[0]!.stats.started;
    a.child.kill('SIGKILL');
    const finished = await algorithm.waitForRollouts(
      rollouts.map((r) => r.rolloutId),
      { timeoutSeconds: 75 },
    );
    for (const r of runners) r.stop();
    await Promise.all(running);

    expect(a.child.signalCode).toBe('SIGKILL');
    expect(finished.map((r) => r.status)).toEqual(rollouts.map(() => 'succeeded'));
    expect(runners[0]!.stats.started).toBeGreaterThan(beforeKill); // the runner of the killed server kept working
    expect(clientA.url).toBe(b.url);
    // every span write and every finish a client saw acknowledged is in the database
    const stored = new Set<string>();
    for (const r of rollouts) {
      for (const s of (await check.querySpans({ rolloutId: r.rolloutId })).items)
        stored.add(`${s.rolloutId}/${s.attemptId}/${s.spanId}`);
    }
    expect(acked.spans.size).toBeGreaterThanOrEqual(50);
    expect([...acked.spans].filter((k) => !stored.has(k))).toEqual([]);
    for (const id of acked.finished) expect((await check.getRolloutById(id))?.status).toBe('succeeded');
    for (const c of [clientA, clientB, algorithm]) await c.close();
  }, 120_000);
});
