import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LightningStore } from '@agl/core';
import { StoreClient } from '@agl/store/client';
import { SqliteStore } from '@agl/store/sqlite';
import { Runner, type RunnerStats } from '@agl/trainer';
import { runBatchAlgorithm, type BatchAlgorithmResult } from './batch-algorithm';
import { createBenchTracer, makeBenchAgent } from './bench-agent';
import { SOURCE_EXEC_ARGV, cpuSecondsOf, serveStore } from './child-processes';
import type { ScenarioSize } from './scenario-sizes';

/** Options shared by the scenario backends. */
export interface ScenarioRunOptions {
  size: ScenarioSize;
  tasks: number;
  /** A fresh directory for the database file(s). */
  dir: string;
  /** Seconds between dequeue polls of an idle runner worker. Default 0.25. */
  workerPollSeconds?: number;
  log?: (line: string) => void;
}

/** One scenario run's figures. */
export interface ScenarioRunResult extends BatchAlgorithmResult {
  /** The key of `bench-results.json`'s `store.<size>` this run's backend is reported under. */
  backend: 'embedded' | 'embeddedOneThread' | 'sqliteHttp' | 'postgresHttp';
  size: ScenarioSize['name'];
  tasks: number;
  totalSpans: number;
  runner: RunnerStats;
  /** CPU seconds of every process of the run (algorithm, runners, server) from the first enqueue to the end. */
  cpuSeconds: number | null;
  /** HTTP runs: CPU seconds of the store server process alone. */
  storeServerCpuSeconds?: number | null;
  /** HTTP runs: runner processes the workers were spread over. */
  runnerProcesses?: number;
  /** Embedded-threads runs: worker threads the runner workers were spread over. */
  runnerThreads?: number;
  /** HTTP runs: peak RSS of the store server process, MB. */
  storeServerPeakRssMb?: number | null;
  /** SQLite runs: database file bytes (after close) per stored span. */
  sqliteBytesPerSpan?: number | null;
}

const quietLogger = (label: string) => {
  let count = 0;
  return {
    warn: (message: string): void => {
      count += 1;
      if (count <= 5) process.stderr.write(`[${label}] ${message}\n`);
    },
  };
};

function fileBytes(path: string): number {
  let total = 0;
  for (const p of [path, `${path}-wal`]) if (existsSync(p)) total += statSync(p).size;
  return total;
}

/**
 * Runs `runner` and the batch algorithm on `store` from the moment every runner worker is ready: the algorithm's
 * result, the spans stored and the CPU seconds of the whole process (this thread and any runner threads). Stops the
 * runner, runs `cleanUp` and closes the store either way.
 */
async function measureEmbedded(
  options: ScenarioRunOptions,
  store: SqliteStore,
  runner: Runner,
  label: string,
  cleanUp?: () => Promise<void>,
): Promise<{ result: BatchAlgorithmResult; totalSpans: number; cpu: number }> {
  const running = runner.run();
  try {
    await Promise.race([runner.ready, running]);
    const cpu0 = process.cpuUsage();
    const result = await runBatchAlgorithm({
      store,
      totalTasks: options.tasks,
      batchSize: options.size.batchSize,
      onProgress: progress(options, label),
    });
    const used = process.cpuUsage(cpu0);
    return { result, totalSpans: (await store.statistics()).totalSpans, cpu: (used.user + used.system) / 1e6 };
  } finally {
    runner.stop();
    await running;
    await cleanUp?.();
    await store.close();
  }
}

/** The embedded backend on one thread: the algorithm and `size.nRunners` async runner workers in this thread, on a SqliteStore. */
export async function runEmbeddedScenario(options: ScenarioRunOptions): Promise<ScenarioRunResult> {
  const { size, tasks } = options;
  const dbPath = join(options.dir, `embedded-${size.name}.sqlite`);
  const store = new SqliteStore({ path: dbPath });
  const tracer = createBenchTracer();
  const runner = new Runner({
    store,
    agent: makeBenchAgent({ maxRounds: size.maxRounds, sleepSeconds: size.sleepSeconds, tracer }),
    nWorkers: size.nRunners,
    tracer,
    pollIntervalSeconds: options.workerPollSeconds ?? 0.25,
    logger: quietLogger('bench embedded runner'),
  });
  const { result, totalSpans, cpu } = await measureEmbedded(options, store, runner, 'embedded one thread', () =>
    tracer.shutdown(),
  );
  return {
    backend: 'embeddedOneThread',
    size: size.name,
    tasks,
    totalSpans,
    runner: runner.stats,
    cpuSeconds: cpu,
    sqliteBytesPerSpan: totalSpans ? fileBytes(dbPath) / totalSpans : null,
    ...result,
  };
}

/** Splits `total` workers over `parts` as evenly as possible; returns each part's [count, offset]. */
function splitWorkers(total: number, parts: number): Array<[number, number]> {
  let offset = 0;
  return Array.from({ length: parts }, (_, i) => {
    const count = Math.floor(total / parts) + (i < total % parts ? 1 : 0);
    offset += count;
    return [count, offset - count];
  });
}

const BENCH_THREAD_AGENT = fileURLToPath(new URL('./bench-thread-agent.ts', import.meta.url));

/**
 * The embedded backend across cores: the algorithm on this thread and `size.nRunners` runner workers spread over
 * `threads` worker threads (default one per core) by `Runner` `workerMode: 'thread'`, each thread with its own
 * `SqliteStore` connection to the same file (the store's multi-connection mode: `BEGIN IMMEDIATE` writes that yield
 * while another connection holds the lock, `PRAGMA data_version` wake-ups every 100 ms). Timing starts once every
 * thread is ready, as the HTTP run's starts once its runner processes are.
 */
export async function runEmbeddedThreadsScenario(
  options: ScenarioRunOptions & { threads?: number },
): Promise<ScenarioRunResult> {
  const { size, tasks } = options;
  const dbPath = join(options.dir, `embedded-threads-${size.name}.sqlite`);
  const store = new SqliteStore({ path: dbPath, waitPollIntervalMs: 100 });
  const threads = Math.max(1, Math.min(options.threads ?? availableParallelism(), size.nRunners));
  // Read by bench-thread-agent.ts in each thread (a thread gets a copy of the environment when it starts).
  process.env.AGL_BENCH_MAX_ROUNDS = String(size.maxRounds);
  process.env.AGL_BENCH_SLEEP_SECONDS = String(size.sleepSeconds);
  const runner = new Runner({
    store,
    workerMode: 'thread',
    threads,
    agentModule: { path: BENCH_THREAD_AGENT },
    nWorkers: size.nRunners,
    pollIntervalSeconds: options.workerPollSeconds ?? 0.25,
    logger: quietLogger('bench runner thread'),
  });
  const { result, totalSpans, cpu } = await measureEmbedded(options, store, runner, 'embedded threads');
  return {
    backend: 'embedded',
    size: size.name,
    tasks,
    totalSpans,
    runner: runner.stats,
    cpuSeconds: cpu,
    runnerThreads: threads,
    sqliteBytesPerSpan: totalSpans ? fileBytes(dbPath) / totalSpans : null,
    ...result,
  };
}

function progress(options: ScenarioRunOptions, label: string): ((done: number, total: number) => void) | undefined {
  if (!options.log) return undefined;
  let last = 0;
  return (done, total) => {
    if (done - last >= Math.max(1, total / 4) || done === total) {
      last = done;
      options.log?.(`  ${label} ${options.size.name}: ${done}/${total} rollouts verified`);
    }
  };
}

const RUNNER_CHILD = fileURLToPath(new URL('./runner-child.ts', import.meta.url));

/** Starts `processes` runner children sharing `size.nRunners` workers against `url`; resolves once all run. */
async function startRunnerChildren(
  url: string,
  size: ScenarioSize,
  processes: number,
  pollSeconds: number,
): Promise<ChildProcess[]> {
  const children: ChildProcess[] = [];
  for (const [i, [workers, offset]] of splitWorkers(size.nRunners, processes).entries()) {
    const profile =
      process.env.AGL_BENCH_RUNNER_CPU_PROFILE && i === 0
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.AGL_BENCH_RUNNER_CPU_PROFILE}`]
        : [];
    const child = fork(RUNNER_CHILD, [], {
      execArgv: [...SOURCE_EXEC_ARGV, ...profile],
      env: {
        ...process.env,
        AGL_STORE_URL: url,
        AGL_BENCH_WORKERS: String(workers),
        AGL_BENCH_WORKER_OFFSET: String(offset),
        AGL_BENCH_MAX_ROUNDS: String(size.maxRounds),
        AGL_BENCH_SLEEP_SECONDS: String(size.sleepSeconds),
        AGL_BENCH_POLL_SECONDS: String(pollSeconds),
      },
    });
    children.push(child);
  }
  await Promise.all(children.map((c) => once(c, 'message')));
  return children;
}

async function stopRunnerChildren(children: ChildProcess[]): Promise<RunnerStats> {
  const total: RunnerStats = { started: 0, succeeded: 0, failed: 0 };
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      const stats = new Promise<void>((resolve) => {
        child.on('message', (m: { type: string; stats?: RunnerStats }) => {
          if (m.type !== 'stats' || !m.stats) return;
          total.started += m.stats.started;
          total.succeeded += m.stats.succeeded;
          total.failed += m.stats.failed;
          resolve();
        });
        child.once('exit', () => resolve());
      });
      child.send({ type: 'stop' });
      await stats;
      await exited;
    }),
  );
  return total;
}

/** Options of {@link runHttpScenario}. */
export interface HttpScenarioOptions extends ScenarioRunOptions {
  /**
   * Runner processes sharing the workers; default one per CPU core (AGL runs one process per runner, and 1,000 Node
   * processes do not fit 2 cores).
   */
  runnerProcesses?: number;
  /** Write the store server's CPU profile here. */
  cpuProfileDir?: string;
  /** PostgreSQL instead of SQLite: the server is started by `startServer` (which returns its URL and a stop). */
  startServer?: () => Promise<{
    url: string;
    peakRssMb(): number | null;
    cpuSeconds(): number | null;
    stop(): Promise<unknown>;
  }>;
}

/**
 * The HTTP backend: the real `agl store serve` (SQLite file) in one child process, the runner workers in
 * `runnerProcesses` other child processes (StoreClient), and the algorithm here (StoreClient).
 */
export async function runHttpScenario(options: HttpScenarioOptions): Promise<ScenarioRunResult> {
  const { size, tasks } = options;
  const dbPath = join(options.dir, `http-${size.name}.sqlite`);
  const server = options.startServer
    ? await options.startServer()
    : await serveStore({ dbPath, cpuProfileDir: options.cpuProfileDir });
  const pollSeconds = options.workerPollSeconds ?? 0.25;
  const processes = Math.max(1, Math.min(options.runnerProcesses ?? availableParallelism(), size.nRunners));
  let children: ChildProcess[] = [];
  const store: LightningStore = new StoreClient({ url: server.url });
  let result: BatchAlgorithmResult;
  let runner: RunnerStats = { started: 0, succeeded: 0, failed: 0 };
  let totalSpans = 0;
  let peak: number | null = null;
  let cpu: number | null = null;
  let serverCpu: number | null = null;
  try {
    children = await startRunnerChildren(server.url, size, processes, pollSeconds);
    const cpuNow = (): number[] =>
      [server.cpuSeconds(), ...children.map((c) => cpuSecondsOf(c.pid))].map((v) => v ?? NaN);
    const before = cpuNow();
    const self0 = process.cpuUsage();
    result = await runBatchAlgorithm({
      store,
      totalTasks: tasks,
      batchSize: size.batchSize,
      onProgress: progress(options, options.startServer ? 'postgres http' : 'sqlite http'),
    });
    const after = cpuNow();
    const self = process.cpuUsage(self0);
    const total = after.reduce((sum, v, i) => sum + v - before[i]!, (self.user + self.system) / 1e6);
    cpu = Number.isFinite(total) ? total : null;
    serverCpu = Number.isFinite(after[0]! - before[0]!) ? after[0]! - before[0]! : null;
    totalSpans = (await store.statistics()).totalSpans;
  } finally {
    runner = await stopRunnerChildren(children);
    peak = server.peakRssMb();
    await store.close();
    await server.stop();
  }
  const backend = options.startServer ? 'postgresHttp' : 'sqliteHttp';
  return {
    backend,
    size: size.name,
    tasks,
    totalSpans,
    runner,
    cpuSeconds: cpu,
    runnerProcesses: processes,
    storeServerCpuSeconds: serverCpu,
    storeServerPeakRssMb: peak,
    sqliteBytesPerSpan: backend === 'sqliteHttp' && totalSpans ? fileBytes(dbPath) / totalSpans : null,
    ...result,
  };
}
