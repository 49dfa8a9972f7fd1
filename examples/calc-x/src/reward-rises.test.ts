import '@agl/langchain/register'; // the zero-code preload, as `npm run demo` runs it
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { runCalcX } from './run-calc-x';

const tempDirs = useTempDirs();

describe('Calc-X GRPO through the Tinker API (fixed seed, about 2 minutes)', () => {
  it(
    'raises the held-out exact-match reward through the LangChain agent, the gateway, the store and the tiny server',
    { timeout: 420_000 },
    async () => {
      const workDir = await tempDirs.make('calc-x-rl-');
      // The demo's settings (GRPO through the tiny server's Tinker API), with 10 GRPO rounds instead of 100 (validation
      // before and after, on 64 held-out tasks): the same rewards as the demo's first 10 rounds.
      const result = await runCalcX({ seed: 1, rounds: 10, valEvery: 10, workDir });
      const [before, after] = [result.baselineReward, result.trainedReward];
      console.log(
        `calc-x reward-rises: held-out reward ${before.toFixed(3)} → ${after.toFixed(3)} in ${result.seconds.toFixed(0)} s`,
      );
      expect(result.validations.map((v) => v.round)).toEqual([0, 10]);
      expect(before).toBeLessThanOrEqual(0.3); // the warm start stops low on the copying step (seed 1: 0.141)
      // Seed 1 measures 0.141 → 0.313 (the demo's round 10; train reward 0.093 in rounds 1-3, 0.195 in 8-10), the same
      // under load as on a quiet machine: sampling seeds follow the prompts, not the arrival order, and GRPO orders each
      // round's trajectories by content. The margin allows for other CPUs' floats.
      expect(after - before).toBeGreaterThanOrEqual(0.1);
      // The training reward, too: the mean of the last three rounds beats that of the first three.
      const train = result.rounds.map((r) => r.trainReward);
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      expect(mean(train.slice(-3))).toBeGreaterThan(mean(train.slice(0, 3)));
      // Every round trained on samples built from the gateway's spans.
      const metrics = (await readFile(join(workDir, 'grpo', 'metrics.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { nSamples: number });
      expect(metrics).toHaveLength(10);
      for (const m of metrics) expect(m.nSamples).toBeGreaterThanOrEqual(128);
    },
  );
});
