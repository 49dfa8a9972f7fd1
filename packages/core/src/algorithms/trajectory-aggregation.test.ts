import { describe, expect, it } from 'vitest';
import { call, trajectory } from './__fixtures__/trajectories';
import { aggregateTrajectory } from './trajectory-aggregation';
import { transitionSamples } from './transition-samples';

// Four calls of one agent loop:
//   call 0: P0 = [1,2]            R0 = [3,4]  lp [−0.1, −0.2]       context C = [1,2,3,4]
//   call 1: P1 = [1,2,3,4,5,6]    R1 = [7]    lp [−0.3]             P1 starts with C → merge; observation [5,6] (mask 0)
//   call 2: P2 = [1,2,9]          R2 = [10,11] lp [−0.4, −0.5]      P2 does not start with C = [1..7] → mismatch, new sample
//   call 3: P3 = [1,2,9,10,11,12] R3 = [13]   no logprobs           merges into sample 2; its logprobs are dropped
const fourCalls = trajectory({
  rolloutId: 'ro-a',
  taskId: 'task-1',
  finalReward: 1,
  transitions: [
    call({ prompt: [1, 2], response: [3, 4], logprobs: [-0.1, -0.2], agentName: 'planner' }),
    call({ prompt: [1, 2, 3, 4, 5, 6], response: [7], logprobs: [-0.3] }),
    call({ prompt: [1, 2, 9], response: [10, 11], logprobs: [-0.4, -0.5], agentName: 'solver' }),
    call({ prompt: [1, 2, 9, 10, 11, 12], response: [13] }),
  ],
});

describe('aggregateTrajectory', () => {
  it('merges calls that continue exactly, masks observation tokens, and splits on a mismatch', () => {
    const { samples, stats } = aggregateTrajectory({ trajectory: fourCalls });
    expect(samples).toHaveLength(2);
    const [first, second] = samples;
    expect(first).toMatchObject({
      promptTokenIds: [1, 2],
      // R0 + observation [5,6] + R1
      responseTokenIds: [3, 4, 5, 6, 7],
      responseMask: [1, 1, 0, 0, 1],
      // observation tokens get logprob 0
      logprobs: [-0.1, -0.2, 0, 0, -0.3],
      turnIndices: [0, 1],
      groupId: 'task-1',
      taskId: 'task-1',
      rolloutId: 'ro-a',
      attemptId: 'at-ro-a',
      reward: 1,
      advantage: 0,
      agentName: 'planner',
    });
    expect(second).toMatchObject({
      promptTokenIds: [1, 2, 9],
      // R2 + observation [12] + R3
      responseTokenIds: [10, 11, 12, 13],
      responseMask: [1, 1, 0, 1],
      turnIndices: [2, 3],
      agentName: 'solver',
    });
    expect(second).not.toHaveProperty('logprobs');
    expect(stats).toMatchObject({
      nSamples: 2,
      nTurns: 4,
      nMismatches: 1,
      nUnmergedTrajectories: 1,
      nSkippedNoTokens: 0,
    });
  });

  it('merges a call whose prompt equals the context exactly (no observation tokens)', () => {
    const t = trajectory({
      rolloutId: 'ro-b',
      taskId: 't',
      transitions: [call({ prompt: [5], response: [6] }), call({ prompt: [5, 6], response: [7, 8] })],
    });
    const { samples, stats } = aggregateTrajectory({ trajectory: t });
    expect(samples.map((s) => [s.promptTokenIds, s.responseTokenIds, s.responseMask])).toEqual([
      [[5], [6, 7, 8], [1, 1, 1]],
    ]);
    expect(stats.nMismatches).toBe(0);
    expect(stats.nUnmergedTrajectories).toBe(0);
  });

  it('treats retokenisation drift inside the prefix as a mismatch', () => {
    // C = [1,2,3,4]; P1 = [1,2,3,99,5] differs at position 3 → a second sample
    const t = trajectory({
      rolloutId: 'ro-c',
      taskId: 't',
      transitions: [call({ prompt: [1, 2], response: [3, 4] }), call({ prompt: [1, 2, 3, 99, 5], response: [6] })],
    });
    const { samples, stats } = aggregateTrajectory({ trajectory: t });
    expect(samples.map((s) => s.promptTokenIds)).toEqual([
      [1, 2],
      [1, 2, 3, 99, 5],
    ]);
    expect(stats.nMismatches).toBe(1);
  });

  it('skips calls without token ids and counts them', () => {
    const t = trajectory({
      rolloutId: 'ro-d',
      taskId: 't',
      transitions: [
        call({ prompt: [1], response: [2] }),
        call({ prompt: [1, 2, 3] }),
        call({ prompt: [1, 2, 3], response: [4] }),
      ],
    });
    const { samples, stats } = aggregateTrajectory({ trajectory: t });
    // call 1 (no response ids) is skipped; call 2 continues C = [1,2] with observation [3]
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ responseTokenIds: [2, 3, 4], responseMask: [1, 0, 1], turnIndices: [0, 2] });
    expect(stats.nSkippedNoTokens).toBe(1);
  });

  it('drops a sample whose prompt is too long and truncates a long response with its mask and logprobs', () => {
    const { samples, stats } = aggregateTrajectory({ trajectory: fourCalls, maxPromptLength: 2, maxResponseLength: 3 });
    // sample 1: prompt length 2 ≤ 2 kept; response [3,4,5,6,7] cut to [3,4,5]; sample 2: prompt length 3 > 2 dropped
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({
      responseTokenIds: [3, 4, 5],
      responseMask: [1, 1, 0],
      logprobs: [-0.1, -0.2, 0],
    });
    expect(stats).toMatchObject({ nTruncated: 1, nDroppedPromptTooLong: 1, nSamples: 1, nTurns: 2 });
  });

  it('scores each sample with the return of its first call', () => {
    // intermediate rewards: r = [0, 0.5, 0, 1] (final 1 on the last call), γ = 1
    // G_3 = 1, G_2 = 1, G_1 = 1.5, G_0 = 1.5 → sample 1 (calls 0,1) = 1.5, sample 2 (calls 2,3) = 1
    const t = trajectory({
      ...fourCalls,
      transitions: fourCalls.transitions.map((c, i) => ({ ...c, reward: i === 1 ? 0.5 : null })),
    });
    const { samples } = aggregateTrajectory({ trajectory: t, reward: { mode: 'intermediate' } });
    expect(samples.map((s) => s.reward)).toEqual([1.5, 1]);
  });
});

describe('transitionSamples', () => {
  it('makes one sample per call with an all-ones mask (AGL 0.3 triplets)', () => {
    const { samples, stats } = transitionSamples({ trajectory: fourCalls, reward: { discount: 0.5 } });
    expect(samples.map((s) => [s.promptTokenIds, s.responseTokenIds, s.responseMask])).toEqual([
      [
        [1, 2],
        [3, 4],
        [1, 1],
      ],
      [[1, 2, 3, 4, 5, 6], [7], [1]],
      [
        [1, 2, 9],
        [10, 11],
        [1, 1],
      ],
      [[1, 2, 9, 10, 11, 12], [13], [1]],
    ]);
    expect(samples.map((s) => s.logprobs)).toEqual([[-0.1, -0.2], [-0.3], [-0.4, -0.5], undefined]);
    // final reward 1 discounted by 0.5 per step from the end: 0.125, 0.25, 0.5, 1
    expect(samples.map((s) => s.reward)).toEqual([0.125, 0.25, 0.5, 1]);
    expect(samples.map((s) => s.turnIndices)).toEqual([[0], [1], [2], [3]]);
    expect(stats).toMatchObject({ nSamples: 4, nTurns: 4, nMismatches: 0, nTrajectoriesWithReward: 1 });
  });

  it('ignores logprobs that do not align with the response ids', () => {
    const t = trajectory({
      rolloutId: 'r',
      taskId: 't',
      transitions: [call({ prompt: [1], response: [2, 3], logprobs: [-1] })],
    });
    expect(transitionSamples({ trajectory: t }).samples[0]).not.toHaveProperty('logprobs');
  });
});
