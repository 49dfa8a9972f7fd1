import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Attempt, AttemptStatus, RolloutConfig } from '@agl/core/schema';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { litAgent, processAgent, Runner, type AgentContext, type RunnerLogger, type RunnerOptions } from '@agl/trainer';
import { afterEach, describe, expect, it } from 'vitest';

const quiet: RunnerLogger = { warn: () => undefined };
const FAULT_AGENT = fileURLToPath(new URL('./__fixtures__/fault-agent.ts', import.meta.url));

type Plan = {
  kind: string;
  config: Partial<RolloutConfig>;
  expectStatuses: AttemptStatus[][];
  final: 'succeeded' | 'failed';
};

/** Attempts of a rollout in order, with their statuses. */
async function attemptsOf(store: MemoryStore | SqliteStore, rolloutId: string): Promise<Attempt[]> {
  return (await store.queryAttempts({ rolloutId, limit: -1 })).items.sort((a, b) => a.sequenceId - b.sequenceId);
}

/** Checks each rollout against its plan: terminal, the final status, and exactly the attempts its config allows. */
async function expectPlans(store: MemoryStore | SqliteStore, plans: Map<string, Plan>): Promise<void> {
  for (const [rolloutId, plan] of plans) {
    const rollout = await store.getRolloutById(rolloutId);
    const attempts = await attemptsOf(store, rolloutId);
    const statuses = attempts.map((a) => a.status);
    expect(rollout?.status, `${plan.kind} ${rolloutId}: ${statuses.join(',')}`).toBe(plan.final);
    expect(attempts.map((a) => a.sequenceId)).toEqual(attempts.map((_, i) => i + 1));
    expect(
      plan.expectStatuses.map((s) => s.join('|')),
      `${plan.kind}: attempt statuses ${statuses.join(',')}`,
    ).toEqual(statuses.map((s, i) => (plan.expectStatuses[i]?.includes(s) ? plan.expectStatuses[i]!.join('|') : s)));
  }
}

/**
 * Runs a runner on `store` (polling every 20 ms, quiet, unless `options` say otherwise) until every planned rollout is
 * terminal, stops it, and checks each rollout against its plan.
 */
async function runPlans(
  store: MemoryStore | SqliteStore,
  plans: Map<string, Plan>,
  options: Omit<RunnerOptions, 'store'>,
  timeoutSeconds = 60,
): Promise<void> {
  const runner = new Runner({ store, pollIntervalSeconds: 0.02, logger: quiet, ...options });
  const running = runner.run();
  try {
    const done = await store.waitForRollouts([...plans.keys()], { timeoutSeconds });
    expect(done).toHaveLength(plans.size);
  } finally {
    runner.stop();
    await running;
  }
  await expectPlans(store, plans);
}

describe('runner faults: agents throw, hang past timeoutSeconds, and workers are killed mid-rollout', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('in-process workers: throws and hangs end every rollout terminal with exactly the allowed attempts, never two at once', async () => {
    const store = new MemoryStore({ scanDebounceSeconds: 0 });
    cleanups.push(() => store.close());
    const retry = { maxAttempts: 3, retryCondition: ['failed', 'timeout'] as AttemptStatus[] };
    const hang = { timeoutSeconds: 0.4, maxAttempts: 2, retryCondition: ['failed', 'timeout'] as AttemptStatus[] };
    const catalogue: Plan[] = [
      { kind: 'ok', config: {}, expectStatuses: [['succeeded']], final: 'succeeded' },
      { kind: 'throw', config: retry, expectStatuses: [['failed'], ['failed'], ['failed']], final: 'failed' },
      { kind: 'throw', config: { maxAttempts: 3, retryCondition: [] }, expectStatuses: [['failed']], final: 'failed' },
      { kind: 'throw-once', config: retry, expectStatuses: [['failed'], ['succeeded']], final: 'succeeded' },
      {
        kind: 'throw-twice',
        config: retry,
        expectStatuses: [['failed'], ['failed'], ['succeeded']],
        final: 'succeeded',
      },
      {
        kind: 'hang',
        config: hang,
        expectStatuses: [
          ['failed', 'timeout'],
          ['failed', 'timeout'],
        ],
        final: 'failed',
      },
      { kind: 'hang-once', config: hang, expectStatuses: [['failed', 'timeout'], ['succeeded']], final: 'succeeded' },
    ];
    const plans = new Map<string, Plan>();
    for (let i = 0; i < 4; i++) {
      for (const plan of catalogue) {
        const r = await store.enqueueRollout({ input: { kind: plan.kind }, config: plan.config });
        plans.set(r.rolloutId, plan);
      }
    }

    const active = new Set<string>();
    const overlaps: string[] = [];
    const calls = new Map<string, number>();
    const agent = litAgent({
      rollout: async (task: unknown, _resources, ctx: AgentContext) => {
        const { kind } = task as { kind: string };
        if (active.has(ctx.rolloutId)) overlaps.push(`${ctx.rolloutId} attempt ${ctx.attemptId}`);
        active.add(ctx.rolloutId);
        const n = (calls.get(ctx.rolloutId) ?? 0) + 1;
        calls.set(ctx.rolloutId, n);
        try {
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (kind === 'throw' || (kind === 'throw-once' && n === 1) || (kind === 'throw-twice' && n <= 2))
            throw new Error(`${kind} attempt ${n}`);
          if (kind === 'hang' || (kind === 'hang-once' && n === 1)) {
            // Hangs until the runner gives up on it at timeoutSeconds (it aborts ctx.signal).
            await new Promise((_resolve, reject) =>
              ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
            );
          }
          return 1;
        } finally {
          active.delete(ctx.rolloutId);
        }
      },
    });
    await runPlans(store, plans, { agent, nWorkers: 6, heartbeatIntervalSeconds: 0.1 });
    expect(overlaps, overlaps.join('; ')).toEqual([]);
    for (const [rolloutId, n] of calls) expect(n, rolloutId).toBe((await attemptsOf(store, rolloutId)).length);
  });

  it('process agents: a crash, a kill -9 and a hang past timeoutSeconds are failed attempts, retried exactly as configured', async () => {
    const store = new MemoryStore({ scanDebounceSeconds: 0 });
    cleanups.push(() => store.close());
    const script = `const t = JSON.parse(process.env.AGL_TASK_INPUT); if (t === 'ok') process.exit(0); if (t === 'crash') { console.error('boom'); process.exit(3); } if (t === 'sigkill') process.kill(process.pid, 'SIGKILL'); setInterval(() => {}, 1000);`;
    const config = { timeoutSeconds: 4, maxAttempts: 2, retryCondition: ['failed', 'timeout'] as AttemptStatus[] };
    const plans = new Map<string, Plan>();
    for (const kind of ['ok', 'crash', 'sigkill', 'hang', 'ok', 'crash']) {
      const r = await store.enqueueRollout({ input: kind, config });
      const failing = kind !== 'ok';
      plans.set(r.rolloutId, {
        kind,
        config,
        expectStatuses: failing
          ? [
              ['failed', 'timeout'],
              ['failed', 'timeout'],
            ]
          : [['succeeded']],
        final: failing ? 'failed' : 'succeeded',
      });
    }
    await runPlans(store, plans, {
      agent: processAgent({ command: process.execPath, args: ['-e', script], killGraceSeconds: 0.2 }),
      nWorkers: 3,
      heartbeatIntervalSeconds: 0.2,
    });
    const crash = [...plans].find(([, p]) => p.kind === 'crash')![0];
    const exceptions = (await store.querySpans({ rolloutId: crash })).items.filter(
      (s) => s.name === 'agentlightning.exception',
    );
    expect(exceptions).toHaveLength(2);
    expect(String(exceptions[0]!.attributes['exception.message'])).toMatch(/code 3[\s\S]*boom/);
  });

  it('worker processes: a worker killed mid-rollout is replaced; the watchdog retries its rollout once; nothing is lost or run twice at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-workers-'));
    const store = new SqliteStore({ path: join(dir, 'agl.sqlite'), scanDebounceSeconds: 0 });
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    process.env.AGL_RELIABILITY_DIR = dir;
    const config = { unresponsiveSeconds: 4, maxAttempts: 2, retryCondition: ['unresponsive'] as AttemptStatus[] };
    const plans = new Map<string, Plan>();
    for (const kind of ['ok', 'killme', 'ok', 'ok']) {
      const r = await store.enqueueRollout({ input: { kind }, config });
      plans.set(r.rolloutId, {
        kind,
        config,
        expectStatuses: kind === 'killme' ? [['unresponsive'], ['succeeded']] : [['succeeded']],
        final: 'succeeded',
      });
    }
    const killed = new Set<string>();
    const killer = setInterval(() => {
      for (const name of readdirSync(dir).filter((n) => n.startsWith('kill-'))) {
        const rolloutId = name.slice('kill-'.length);
        if (killed.has(rolloutId)) continue;
        killed.add(rolloutId);
        const pid = Number(readFileSync(join(dir, name), 'utf8'));
        process.kill(pid, 'SIGKILL');
        // The dead worker cannot release its lock; wait until it is gone, then do it for it.
        const release = setInterval(() => {
          try {
            process.kill(pid, 0);
          } catch {
            clearInterval(release);
            rmSync(join(dir, `active-${rolloutId}`), { force: true });
          }
        }, 10);
      }
    }, 20);
    try {
      await runPlans(
        store,
        plans,
        {
          workerMode: 'process',
          agentModule: { path: FAULT_AGENT },
          nWorkers: 2,
          pollIntervalSeconds: 0.05,
          heartbeatIntervalSeconds: 0.25,
        },
        90,
      );
    } finally {
      clearInterval(killer);
    }
    expect(killed.size).toBe(1);
    expect(readdirSync(dir).filter((n) => n.startsWith('overlap-'))).toEqual([]);
    const log = readFileSync(join(dir, 'attempts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { rolloutId: string; pid: number });
    for (const [rolloutId, plan] of plans)
      expect(log.filter((l) => l.rolloutId === rolloutId)).toHaveLength(plan.kind === 'killme' ? 2 : 1);
    expect(
      new Set(log.map((l) => l.pid)).size,
      'the killed workers were replaced by new processes',
    ).toBeGreaterThanOrEqual(2);
    expect(existsSync(join(dir, 'attempts.jsonl'))).toBe(true);
  });
});
