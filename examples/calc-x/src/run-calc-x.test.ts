import '@agl/langchain/register'; // the zero-code preload, as `node --import @agl/langchain/register` does for the demo
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SqliteStore } from '@agl/store/sqlite';
import { useTempDirs } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { linearDecay, runCalcX } from './run-calc-x';

const tempDirs = useTempDirs();

describe('Calc-X pipeline through the Tinker API (short, fixed seed)', () => {
  it(
    'runs warm start, validation, GRPO rounds through the tiny server’s Tinker endpoints (round 2 samples round 1’s sampler path) and a resume with load_weights',
    { timeout: 300_000 },
    async () => {
      const workDir = await tempDirs.make('calc-x-it-');
      const lines: string[] = [];
      const settings = {
        seed: 3,
        sftSteps: 8,
        tasksPerRound: 2,
        groupSize: 3,
        valEvery: 0,
        valSize: 3,
        nRunners: 4,
        workDir,
        log: (l: string) => lines.push(l),
      };
      // `sftStopAt: 0` is met at the first check, so the warm start stops after 8 of its 16 steps.
      const first = await runCalcX({ ...settings, sftSteps: 16, sftStopAt: 0, rounds: 1 });
      expect(first.validations.map((v) => v.round)).toEqual([0, 1]);
      expect(first.warmStartSteps).toBe(8);
      expect(lines.filter((l) => l.startsWith('warm start'))).toEqual([
        expect.stringMatching(/^warm start: 8\/16 SFT steps, loss \d+\.\d{3}, probe tasks solved 0\.000$/),
      ]);
      expect(
        lines.some((l) => /^round 1: train reward \d\.\d{3}, \d+ samples, \d+ groups skipped, \d+ tokens/.test(l)),
      ).toBe(true);
      // The Tinker checkpoint of round 1: save_weights (weights + Adam) and the sampler path round 2 samples.
      const ckpt = JSON.parse(await readFile(join(workDir, 'grpo', 'trainer.ckpt'), 'utf8')) as {
        statePath: string;
        samplerPath: string;
      };
      expect(ckpt.samplerPath).toMatch(/^tinker:\/\/.+:train:0\/sampler_weights\/000001$/);
      expect(ckpt.statePath).toMatch(/^tinker:\/\/.+:train:0\/weights\/000001$/);
      // A second run on the same work dir resumes (load_weights) from the checkpoint and state.json: no warm start,
      // only round 2.
      lines.length = 0;
      const result = await runCalcX({ ...settings, rounds: 2 });
      expect(lines[0]).toMatch(/^resuming after round 1/);
      expect(lines.some((l) => l.startsWith('warm start'))).toBe(false);
      expect(result.steps).toBe(1);
      expect(result.validations.map((v) => v.round)).toEqual([0, 1, 2]);
      expect(lines.some((l) => l.startsWith('round 2:'))).toBe(true);
      const metrics = (await readFile(join(workDir, 'grpo', 'metrics.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { round: number; nSamples: number; resourcesId: string });
      expect(metrics.map((m) => m.round)).toEqual([1, 2]);
      // At least one trajectory-level sample per rollout (a second call whose prompt does not continue the first exactly,
      // e.g. after a malformed tool call, becomes its own sample), with token ids from the gateway spans.
      for (const m of metrics) expect(m.nSamples).toBeGreaterThanOrEqual(6);
      expect((await readFile(result.pngPath)).subarray(1, 4).toString('ascii')).toBe('PNG');

      const store = new SqliteStore({ path: join(workDir, 'store.sqlite') });
      try {
        const rollouts = (await store.queryRollouts({ limit: 100 })).items;
        const train = rollouts.filter((r) => r.mode === 'train');
        expect(train).toHaveLength(12);
        expect(new Set(train.map((r) => (r.metadata as { task_id?: string }).task_id)).size).toBeLessThanOrEqual(4);
        // Round 2's rollouts ran on the sampler weights the first update saved (Contract 4), re-published on resume
        // with the restarted server's endpoint, and the gateway routed them there.
        const round2 = train.filter((r) => (r.metadata as { round?: number }).round === 2);
        expect(round2).toHaveLength(6);
        const ids = new Set(round2.map((r) => r.resourcesId));
        expect(ids.size).toBe(1);
        const published = await store.getResourcesById([...ids][0]!);
        expect(JSON.stringify(published?.resources)).toContain(`agl-tiny@${ckpt.samplerPath}`);
        const spans = (await store.querySpans({ rolloutId: round2[0]!.rolloutId })).items;
        const gatewaySpan = spans.find((s) => s.attributes['agl.gateway'] === true);
        expect(gatewaySpan?.attributes['gen_ai.response.model']).toBe(ckpt.samplerPath);
        // The zero-code preload traced the LangChain agent itself.
        expect(spans.some((s) => s.name === 'calc-x' || s.attributes['agent.name'] === 'calc-x')).toBe(true);
      } finally {
        await store.close();
      }
    },
  );

  it('refuses a backend other than tinker and more than one policy step a round, naming the fix', async () => {
    await expect(runCalcX({ backend: 'tiny' as never, workDir: await tempDirs.make('calc-x-bad-') })).rejects.toThrow(
      /backend "tiny" is not available: Calc-X trains through Tinker's API only; drop the option or pass backend: 'tinker'/,
    );
    await expect(runCalcX({ stepsPerRound: 2, workDir: await tempDirs.make('calc-x-bad-') })).rejects.toThrow(
      /stepsPerRound 2: Tinker's path takes one forward_backward \+ optim_step a round; use 1/,
    );
  });
});

describe('linearDecay (--rl-lr-end)', () => {
  it('goes from the start rate at round 1 to the end rate at the last round, and holds it after', () => {
    const lr = linearDecay({ rlLearningRate: 1e-3, rlLearningRateEnd: 1e-4, rounds: 11 })!;
    expect(lr(1)).toBeCloseTo(1e-3, 12);
    expect(lr(6)).toBeCloseTo(5.5e-4, 12);
    expect(lr(11)).toBeCloseTo(1e-4, 12);
    expect(lr(15)).toBeCloseTo(1e-4, 12); // a resumed run that goes past its rounds
    expect(linearDecay({ rlLearningRate: 1e-3, rounds: 11 })).toBeUndefined();
    expect(linearDecay({ rlLearningRate: 1e-3, rlLearningRateEnd: 0, rounds: 1 })!(1)).toBe(1e-3);
  });
});
