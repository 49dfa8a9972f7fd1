/**
 * `npm run demo [-- --summary-json out.json] [--seed N] [--rounds N] [--sft-steps N] [--sft-stop-at X|off] [--train-ops +-**] [--control shuffled-rewards] [--backend tinker]`:
 * Calc-X end to end, offline.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { NEGATIVE_CREDITS } from '@agl/core/algorithms';
import { CALC_TOKENIZERS } from './calc-tasks';
import { flagChoice, flagNumber, flagOps } from './flag-choice';
import { runCalcX } from './run-calc-x';

const { values } = parseArgs({
  options: {
    'summary-json': { type: 'string' },
    png: { type: 'string', default: 'calc-x-reward-curve.png' },
    seed: { type: 'string' },
    rounds: { type: 'string' },
    'sft-steps': { type: 'string' },
    'sft-lr': { type: 'string' },
    'sft-stop-at': { type: 'string' },
    'rl-lr': { type: 'string' },
    'rl-lr-end': { type: 'string' },
    'group-size': { type: 'string' },
    'tasks-per-round': { type: 'string' },
    'val-size': { type: 'string' },
    control: { type: 'string' },
    'steps-per-round': { type: 'string' },
    'train-temperature': { type: 'string' },
    'negative-credit': { type: 'string' },
    'warm-start-from': { type: 'string' },
    'val-every': { type: 'string' },
    'work-dir': { type: 'string' },
    tokenizer: { type: 'string' },
    'token-shifts': { type: 'string' },
    'segment-positions': { type: 'string' },
    'train-ops': { type: 'string' },
    backend: { type: 'string' },
  },
});
// Paths are relative to where `npm run demo` was typed (npm sets INIT_CWD), not to this workspace.
const here = (p: string): string => resolve(process.env.INIT_CWD ?? process.cwd(), p);
const num = (flag: keyof typeof values): number | undefined => flagNumber(flag, values[flag]);
const control = flagChoice('control', values.control, ['none', 'shuffled-rewards', 'zero-advantages'] as const);
const negativeCredit = flagChoice('negative-credit', values['negative-credit'], NEGATIVE_CREDITS);
const tokenizer = flagChoice('tokenizer', values.tokenizer, CALC_TOKENIZERS);
const segments = flagChoice('segment-positions', values['segment-positions'], ['on', 'off'] as const);
const shifts = flagChoice('token-shifts', values['token-shifts'], ['1', '2'] as const);
const trainOps = flagOps('train-ops', values['train-ops']);
if (values.backend === 'tiny') {
  console.error(
    "--backend tiny: removed; the demo trains the embedded policy through Tinker's API (the tiny server's /api/v1). Drop the flag or pass --backend tinker.",
  );
  process.exit(2);
}
const backend = flagChoice('backend', values.backend, ['tinker'] as const);
const t0 = Date.now();
const log = (line: string): void =>
  console.log(`[calc-x ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${line}`);
const result = await runCalcX({
  seed: num('seed'),
  rounds: num('rounds'),
  sftSteps: num('sft-steps'),
  sftLearningRate: num('sft-lr'),
  sftStopAt: values['sft-stop-at'] === 'off' ? null : num('sft-stop-at'),
  rlLearningRate: num('rl-lr'),
  rlLearningRateEnd: num('rl-lr-end'),
  groupSize: num('group-size'),
  tasksPerRound: num('tasks-per-round'),
  valSize: num('val-size'),
  control,
  negativeCredit,
  stepsPerRound: num('steps-per-round'),
  trainTemperature: num('train-temperature'),
  valEvery: num('val-every'),
  tokenizer,
  trainOps,
  backend,
  model: {
    ...(shifts === undefined ? {} : { prev2TokenEmbedding: shifts === '2' }),
    ...(segments === undefined ? {} : { segmentPositions: segments === 'on' }),
  },
  warmStartFrom: values['warm-start-from'] === undefined ? undefined : here(values['warm-start-from']),
  workDir: values['work-dir'] === undefined ? undefined : here(values['work-dir']),
  log,
});
await copyFile(result.pngPath, here(values.png));
console.log('');
console.log(`validation reward before RL (after warm start): ${result.baselineReward.toFixed(3)}`);
console.log(`validation reward after RL:                     ${result.trainedReward.toFixed(3)}`);
console.log(
  `GRPO rounds ${result.steps}; wall ${result.seconds.toFixed(1)} s (warm start ${result.warmStartSteps} SFT steps, ${result.warmStartSeconds.toFixed(1)} s); CPU ${result.cpuSeconds.toFixed(1)} s (main thread + workers)`,
);
console.log(`reward curve: ${here(values.png)}; store, weights and metrics.jsonl: ${result.workDir}`);
if (values['summary-json']) {
  const summary = {
    baselineReward: result.baselineReward,
    trainedReward: result.trainedReward,
    steps: result.steps,
    seconds: result.seconds,
  };
  await writeFile(here(values['summary-json']), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`summary: ${here(values['summary-json'])}`);
}
process.exit(0);
