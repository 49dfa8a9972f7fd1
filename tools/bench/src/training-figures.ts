import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { ResultTree } from './results';
import { runWorkspaceScript } from './sub-benches';

interface DemoSummary {
  baselineReward: number;
  trainedReward: number;
  steps: number;
  seconds: number;
  /** Written by this bench beside the demo's summary: the 1-minute load average, sampled every 10 s during the run. */
  loadAverage?: number;
}

/** The seeds `npm run demo` is measured on (issue 52: ≥ 0.8 held-out within 10 minutes on each). */
export const TRAINING_SEEDS = [1, 2, 3] as const;

/**
 * The Calc-X demo's figures with its defaults (`npm run demo -- --seed N --summary-json <file>`) on each of
 * {@link TRAINING_SEEDS}, one run after another: validation reward after the warm start and after RL, rounds, wall
 * seconds and the load average during the run. `training.demo` holds seed 1's figures (plain `npm run demo`), the
 * worst seed's trained reward and seconds, and `seeds[]`. The runs take minutes, so they run only when `run` is true;
 * otherwise the last summaries in `artifactsDir` are read and marked stale, or the figures are null with the reason.
 */
export async function trainingFigures(options: {
  artifactsDir: string;
  run: boolean;
  log?: (line: string) => void;
}): Promise<ResultTree> {
  const seeds: ResultTree[] = [];
  for (const seed of TRAINING_SEEDS) {
    const prefix = seed === 1 ? 'calc-x' : `calc-x-seed${seed}`;
    const file = join(options.artifactsDir, `${prefix}-summary.json`);
    if (options.run) {
      options.log?.(`  training (defaults, seed ${seed}): npm run demo -- --seed ${seed} --summary-json … (minutes)`);
      const loads: number[] = [];
      const timer = setInterval(() => loads.push(loadavg()[0]!), 10_000);
      try {
        await runWorkspaceScript({
          workspace: 'examples/calc-x',
          script: 'demo',
          args: [
            '--seed',
            String(seed),
            '--summary-json',
            file,
            '--png',
            join(options.artifactsDir, `${prefix}-reward-curve.png`),
          ],
          logFile: join(options.artifactsDir, `${prefix}-demo.log`),
          timeoutMs: 60 * 60_000,
        });
      } catch (error) {
        seeds.push({ seed, trainedReward: null, reason: (error as Error).message });
        continue;
      } finally {
        clearInterval(timer);
      }
      const summary = JSON.parse(readFileSync(file, 'utf8')) as DemoSummary;
      const loadAverage = loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : loadavg()[0]!;
      const withLoad = { ...summary, loadAverage: Math.round(loadAverage * 100) / 100 };
      writeFileSync(file, `${JSON.stringify(withLoad, null, 2)}\n`);
    }
    if (!existsSync(file)) {
      seeds.push({
        seed,
        trainedReward: null,
        reason:
          'not run: pass --with-training (or AGL_BENCH_TRAINING=1) to run the Calc-X demo on seeds 1-3 (minutes each)',
      });
      continue;
    }
    const summary = JSON.parse(readFileSync(file, 'utf8')) as DemoSummary;
    seeds.push({
      seed,
      baselineReward: summary.baselineReward,
      trainedReward: summary.trainedReward,
      rewardGain: summary.trainedReward - summary.baselineReward,
      rounds: summary.steps,
      seconds: summary.seconds,
      loadAverage: summary.loadAverage ?? null,
      stale: !options.run,
      summaryWrittenAt: statSync(file).mtime.toISOString(),
    });
  }
  const done = seeds.filter((s) => typeof s.trainedReward === 'number') as Array<
    ResultTree & { trainedReward: number; seconds: number }
  >;
  const first = seeds[0]!;
  return {
    ...first,
    minTrainedReward: done.length === seeds.length ? Math.min(...done.map((s) => s.trainedReward)) : null,
    maxSeconds: done.length === seeds.length ? Math.max(...done.map((s) => s.seconds)) : null,
    seeds,
  };
}
