import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultTree } from './results';
import { runWorkspaceScript } from './sub-benches';

interface DemoSummary {
  baselineReward: number;
  trainedReward: number;
  steps: number;
  seconds: number;
}

/** The Calc-X runs the bench reports: the defaults, and the settings that reach 0.8 within 10 minutes. */
export const TRAINING_RUNS = {
  demo: { label: 'defaults', args: [] as string[] },
  tenMinutes: {
    label: 'segment positions, half products, 224-step warm start, 150 rounds',
    args: [
      '--segment-positions',
      'on',
      '--train-ops',
      '+-**',
      '--sft-steps',
      '224',
      '--sft-stop-at',
      'off',
      '--rounds',
      '150',
    ],
  },
} as const;

/**
 * One Calc-X GRPO demo's figures (`npm run demo -- <args> --summary-json <file>`): validation reward after the warm
 * start and after RL, rounds and wall seconds. The demo takes minutes, so it runs only when `run` is true; otherwise
 * the last summary in `artifactsDir` is read and marked stale, or the figures are null with the reason.
 */
export async function trainingFigures(options: {
  artifactsDir: string;
  run: boolean;
  which?: keyof typeof TRAINING_RUNS;
  log?: (line: string) => void;
}): Promise<ResultTree> {
  const which = options.which ?? 'demo';
  const prefix = which === 'demo' ? 'calc-x' : `calc-x-${which}`;
  const file = join(options.artifactsDir, `${prefix}-summary.json`);
  const { label, args } = TRAINING_RUNS[which];
  if (options.run) {
    options.log?.(`  training (${label}): npm run demo -- ${[...args, '--summary-json'].join(' ')} (minutes)`);
    try {
      await runWorkspaceScript({
        workspace: 'examples/calc-x',
        script: 'demo',
        args: [...args, '--summary-json', file, '--png', join(options.artifactsDir, `${prefix}-reward-curve.png`)],
        logFile: join(options.artifactsDir, `${prefix}-demo.log`),
        timeoutMs: 30 * 60_000,
      });
    } catch (error) {
      return { trainedReward: null, reason: (error as Error).message };
    }
  }
  if (!existsSync(file)) {
    return {
      trainedReward: null,
      reason: 'not run: pass --with-training (or AGL_BENCH_TRAINING=1) to run the Calc-X demo (several minutes)',
    };
  }
  const summary = JSON.parse(readFileSync(file, 'utf8')) as DemoSummary;
  return {
    baselineReward: summary.baselineReward,
    trainedReward: summary.trainedReward,
    rewardGain: summary.trainedReward - summary.baselineReward,
    rounds: summary.steps,
    seconds: summary.seconds,
    stale: !options.run,
    summaryWrittenAt: statSync(file).mtime.toISOString(),
  };
}
