import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inclusiveHotspots, summarizeCpuProfile } from './cpu-profile-summary';
import { postgresServerStarter } from './postgres-server';
import { median, round, type ResultTree } from './results';
import { SCENARIO_SIZES, type ScenarioSize } from './scenario-sizes';
import {
  runEmbeddedScenario,
  runEmbeddedThreadsScenario,
  runHttpScenario,
  type ScenarioRunResult,
} from './store-scenario';

/** Options of {@link runStoreBenchmarks}. */
export interface StoreBenchmarksOptions {
  quick: boolean;
  /** Repetitions of the large size (medians); the smaller sizes run once. */
  largeRepeats: number;
  artifactsDir: string;
  log: (line: string) => void;
  /** Called after each size with the figures so far (the caller saves them). */
  onPartial?: (figures: { store: ResultTree; memory: ResultTree }) => void;
}

const summarizeRuns = (runs: ScenarioRunResult[]): ResultTree => ({
  rolloutsPerSecond: round(median(runs.map((r) => r.rolloutsPerSecond)), 2),
  rolloutsPerCpuSecond: round(median(runs.map((r) => (r.cpuSeconds ? r.verified / r.cpuSeconds : NaN))), 2),
  tasks: runs[0]?.tasks ?? 0,
  repeats: runs.length,
  spansPerRollout: round(median(runs.map((r) => r.totalSpans / r.verified)), 2),
  runs: runs.map((r) => ({
    rolloutsPerSecond: round(r.rolloutsPerSecond, 2),
    seconds: round(r.seconds, 2),
    verified: r.verified,
    lateSpans: r.lateSpans,
    cpuSeconds: r.cpuSeconds === null ? null : round(r.cpuSeconds, 2),
    ...(r.runnerProcesses === undefined ? {} : { runnerProcesses: r.runnerProcesses }),
    ...(r.runnerThreads === undefined ? {} : { runnerThreads: r.runnerThreads }),
    storeServerCpuSeconds: r.storeServerCpuSeconds == null ? null : round(r.storeServerCpuSeconds, 2),
    storeServerPeakRssMb: r.storeServerPeakRssMb == null ? null : round(r.storeServerPeakRssMb, 1),
    sqliteBytesPerSpan: r.sqliteBytesPerSpan == null ? null : Math.round(r.sqliteBytesPerSpan),
    runnerFailed: r.runner.failed,
  })),
});

/** The main thread's profile: the largest file (tsx's module loader thread writes a small second one). */
function mainThreadProfile(dir: string): string | null {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  return files[0] ?? null;
}

/** Writes a readable hotspot list next to the profile and returns its headline figures. */
function describeProfile(profile: string, artifactsDir: string): ResultTree {
  const self = summarizeCpuProfile(profile, 30);
  const inclusive = inclusiveHotspots(profile, 30);
  const pct = (v: number): string => `${(v * 100).toFixed(1).padStart(5)} %`;
  const text = [
    `CPU profile of the store server (HTTP + SQLite, large scenario): ${profile}`,
    `samples: ${self.samples}; idle: ${pct(self.idleShare)}`,
    '',
    'self time:',
    ...self.hotspots.map((h) => `${pct(h.selfShare)}  ${h.frame}`),
    '',
    'inclusive time:',
    ...inclusive.map((h) => `${pct(h.totalShare)}  ${h.frame}`),
  ].join('\n');
  const summaryFile = join(artifactsDir, 'store-server-cpu-profile.txt');
  writeFileSync(summaryFile, `${text}\n`);
  return {
    file: profile,
    summary: summaryFile,
    idleShare: round(self.idleShare, 3),
    topSelf: self.hotspots.slice(0, 5).map((h) => `${(h.selfShare * 100).toFixed(1)} % ${h.frame}`),
  };
}

/**
 * The store scenario for every size on the embedded (runner workers on a thread per core, and everything on one thread) and HTTP + SQLite backends (and PostgreSQL behind the server when
 * `AGL_TEST_PG_URL` is set and `PostgresStore` exists; one run per size). The first large HTTP run records the server's
 * CPU profile.
 */
export async function runStoreBenchmarks(
  options: StoreBenchmarksOptions,
): Promise<{ store: ResultTree; memory: ResultTree }> {
  const store: ResultTree = {};
  const memory: ResultTree = {};
  const profileDir = join(options.artifactsDir, 'cpu-profiles');
  rmSync(profileDir, { recursive: true, force: true });
  mkdirSync(profileDir, { recursive: true });
  const pg = await postgresServerStarter();
  for (const size of SCENARIO_SIZES) {
    const tasks = options.quick ? size.quickTasks : size.tasks;
    const repeats = size.name === 'large' ? options.largeRepeats : 1;
    const repeatsOf = (key: string): number => (key === 'postgresHttp' ? 1 : repeats);
    const entry: ResultTree = { aglValues: describeSize(size, tasks) };
    const backends: Array<{ key: string; run: (rep: number, dir: string) => Promise<ScenarioRunResult> }> = [
      { key: 'embedded', run: (_rep, dir) => runEmbeddedThreadsScenario({ size, tasks, dir, log: options.log }) },
      { key: 'embeddedOneThread', run: (_rep, dir) => runEmbeddedScenario({ size, tasks, dir, log: options.log }) },
      {
        key: 'sqliteHttp',
        run: (rep, dir) =>
          runHttpScenario({
            size,
            tasks,
            dir,
            log: options.log,
            cpuProfileDir: size.name === 'large' && rep === 0 ? profileDir : undefined,
          }),
      },
    ];
    if (pg.start)
      backends.push({
        key: 'postgresHttp',
        run: (_rep, dir) => runHttpScenario({ size, tasks, dir, log: options.log, startServer: pg.start! }),
      });
    else entry.postgresHttp = { rolloutsPerSecond: null, reason: pg.reason };
    for (const backend of backends) {
      const runs: ScenarioRunResult[] = [];
      try {
        for (let rep = 0; rep < repeatsOf(backend.key); rep += 1) {
          const dir = mkdtempSync(join(tmpdir(), `agl-bench-${size.name}-`));
          try {
            options.log(
              `store ${size.name} ${backend.key} run ${rep + 1}/${repeatsOf(backend.key)}: ${tasks} tasks, ${size.nRunners} runners`,
            );
            const run = await backend.run(rep, dir);
            options.log(
              `  → ${run.rolloutsPerSecond.toFixed(1)} rollouts/s (${run.seconds.toFixed(1)} s, all ${run.verified} verified)`,
            );
            runs.push(run);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        }
        entry[backend.key] = summarizeRuns(runs);
      } catch (error) {
        entry[backend.key] = { rolloutsPerSecond: null, reason: (error as Error).message };
        options.log(`  ✗ ${backend.key} ${size.name}: ${(error as Error).message}`);
      }
      if (size.name === 'large' && backend.key === 'sqliteHttp' && runs.length > 0) {
        memory.storeServerPeakRssMb = round(Math.max(...runs.map((r) => r.storeServerPeakRssMb ?? NaN)), 1);
        memory.sqliteBytesPerSpan = Math.round(median(runs.map((r) => r.sqliteBytesPerSpan ?? NaN)));
        memory.note =
          'peak RSS (VmHWM) of the `agl store serve` process (run from TypeScript sources through tsx) over the large HTTP runs; bytes per span = database file / stored spans';
        const profile = mainThreadProfile(profileDir);
        if (profile) (entry.sqliteHttp as ResultTree).cpuProfile = describeProfile(profile, options.artifactsDir);
      }
    }
    store[size.name] = entry;
    options.onPartial?.({ store, memory });
  }
  return { store, memory };
}

function describeSize(size: ScenarioSize, tasks: number): ResultTree {
  return {
    mode: 'batch',
    aglTotalTasks: size.aglTotalTasks,
    tasks,
    batchSize: size.batchSize,
    nRunners: size.nRunners,
    maxRounds: size.maxRounds,
    sleepSeconds: size.sleepSeconds,
  };
}
