/**
 * Benchmark (not a test): `npm run bench:controls -w examples/calc-x [-- --seeds 1,2,3 --rounds N --sft-steps N
 * --sft-stop-at X|off --negative-credit whole-response --segment-positions on|off --train-ops +-**]`.
 * Per seed: one warm start, then GRPO and the two controls (shuffled rewards, zero advantages) from that same warm
 * start with the same settings, so the only difference between the three is the RL signal. Prints each run and the
 * mean validation gain of each variant. Slow: 3 runs per seed.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NEGATIVE_CREDITS } from '@agl/core/algorithms';
import { flagChoice, flagNumber, flagOps } from './flag-choice';
import { runCalcX, type CalcXOptions } from './run-calc-x';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '1,2,3' },
    rounds: { type: 'string' },
    'sft-steps': { type: 'string' },
    'sft-stop-at': { type: 'string' },
    'negative-credit': { type: 'string' },
    'segment-positions': { type: 'string' },
    'train-ops': { type: 'string' },
  },
});
const negativeCredit = flagChoice('negative-credit', values['negative-credit'], NEGATIVE_CREDITS);
const seeds = values.seeds.split(',').map((s) => flagNumber('seeds', s)!);
const rounds = flagNumber('rounds', values.rounds);
const sftSteps = flagNumber('sft-steps', values['sft-steps']);
const sftStopAt = values['sft-stop-at'] === 'off' ? null : flagNumber('sft-stop-at', values['sft-stop-at']);
const segments = flagChoice('segment-positions', values['segment-positions'], ['on', 'off'] as const);
const trainOps = flagOps('train-ops', values['train-ops']);
const model = segments === undefined ? undefined : { segmentPositions: segments === 'on' };
const rows: Array<{ control: string; seed: number; baseline: number; trained: number; seconds: number }> = [];
for (const seed of seeds) {
  let warmStartFrom: string | undefined;
  for (const control of ['none', 'shuffled-rewards', 'zero-advantages'] as const) {
    const workDir = await mkdtemp(join(tmpdir(), `calc-x-${control}-${seed}-`));
    const options: CalcXOptions = {
      seed,
      control,
      workDir,
      warmStartFrom,
      rounds,
      sftSteps,
      sftStopAt,
      negativeCredit,
      trainOps,
      model,
    };
    const r = await runCalcX(options);
    warmStartFrom ??= join(workDir, 'weights');
    rows.push({ control, seed, baseline: r.baselineReward, trained: r.trainedReward, seconds: r.seconds });
    console.log(JSON.stringify(rows.at(-1)));
  }
}
for (const control of ['none', 'shuffled-rewards', 'zero-advantages']) {
  const mine = rows.filter((r) => r.control === control);
  const gain = mine.reduce((s, r) => s + r.trained - r.baseline, 0) / mine.length;
  console.log(`${control.padEnd(17)} mean gain ${gain.toFixed(3)} over seeds ${seeds.join(',')}`);
}
process.exit(0);
