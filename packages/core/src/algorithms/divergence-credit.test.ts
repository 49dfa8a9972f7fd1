import { describe, expect, it } from 'vitest';
import { call, trajectory } from './__fixtures__/trajectories';
import { buildTrainingSamples } from './build-training-samples';
import { firstDivergenceCredit } from './divergence-credit';
import type { TrainingSample } from './training-sample';

function sample(
  over: Partial<TrainingSample> & Pick<TrainingSample, 'rolloutId' | 'responseTokenIds' | 'reward' | 'advantage'>,
): TrainingSample {
  return {
    promptTokenIds: [1, 2],
    responseMask: over.responseTokenIds.map(() => 1),
    groupId: 'A',
    taskId: 'A',
    attemptId: `${over.rolloutId}-at`,
    mode: 'train',
    turnIndices: [0],
    agentName: null,
    ...over,
  };
}

describe('firstDivergenceCredit', () => {
  // Task A: call tokens, then a masked tool result, then the answer. `good` is right; `badCall` called the tool with a
  // wrong token (5 → 6) and then copied the wrong result faithfully; `badCopy` called right and copied the result wrong.
  const mask = [1, 1, 0, 0, 1, 1];
  /** A task-A sample (response mask `mask`). */
  const withMask = (rolloutId: string, responseTokenIds: number[], reward: number, advantage: number): TrainingSample =>
    sample({ rolloutId, responseTokenIds, responseMask: mask, reward, advantage });
  const good = withMask('good', [4, 5, 20, 21, 20, 21], 1, 1.2);
  const badCall = withMask('badCall', [4, 6, 30, 31, 30, 31], 0, -0.8);
  const badCopy = withMask('badCopy', [4, 5, 20, 21, 20, 29], 0, -0.8);

  it('keeps the blame up to the first token that differs from the closest better sample', () => {
    const [g, call, copy] = firstDivergenceCredit([good, badCall, badCopy]);
    expect(g).toBe(good);
    // The wrong call token (index 1) carries the blame; the faithful copy of its result is not pushed down.
    expect(call!.responseMask).toEqual([1, 1, 0, 0, 0, 0]);
    // Diverged on the last token: nothing after it, so the sample is returned as it was.
    expect(copy).toBe(badCopy);
    expect(call!.advantage).toBe(-0.8);
    expect(badCall.responseMask).toEqual(mask);
  });

  it('passes blame from a differing observation token to the next token the policy produced', () => {
    // Same call tokens, but the tool result differs (say a rendered call id): the answer's first token is blamed.
    const odd = sample({
      rolloutId: 'odd',
      responseTokenIds: [4, 5, 22, 21, 20, 21, 7],
      responseMask: [1, 1, 0, 0, 1, 1, 1],
      reward: 0,
      advantage: -1,
    });
    const [, out] = firstDivergenceCredit([good, odd]);
    expect(out!.responseMask).toEqual([1, 1, 0, 0, 1, 0, 0]);
  });

  it('picks the better sample sharing the longest prefix, and only within the group and prompt', () => {
    const closer = withMask('closer', [4, 6, 30, 31, 30, 31], 0.5, 0.1);
    const worst = withMask('worst', [4, 6, 30, 31, 9, 9], 0, -1);
    expect(firstDivergenceCredit([good, closer, worst])[2]!.responseMask).toEqual([1, 1, 0, 0, 1, 0]);
    // A better sample of another group, or with another prompt, is no reference.
    const otherGroup = { ...good, groupId: 'B' };
    const otherPrompt = { ...good, promptTokenIds: [1, 3] };
    expect(firstDivergenceCredit([otherGroup, otherPrompt, badCall])[2]).toBe(badCall);
  });

  it('leaves positive, zero and equally rewarded samples alone', () => {
    const tie = { ...badCall, rolloutId: 'tie', reward: 1, advantage: -0.1 };
    const zero = { ...badCall, rolloutId: 'zero', advantage: 0 };
    const out = firstDivergenceCredit([good, tie, zero]);
    expect(out[1]).toBe(tie);
    expect(out[2]).toBe(zero);
  });

  it('is what buildTrainingSamples applies with negativeCredit first-divergence', () => {
    const trajectories = [
      trajectory({
        rolloutId: 'r1',
        taskId: 'T',
        finalReward: 1,
        transitions: [call({ prompt: [1], response: [2, 3, 4] })],
      }),
      trajectory({
        rolloutId: 'r2',
        taskId: 'T',
        finalReward: 0,
        transitions: [call({ prompt: [1], response: [2, 5, 4] })],
      }),
    ];
    const whole = buildTrainingSamples({ trajectories });
    const narrowed = buildTrainingSamples({ trajectories, advantage: { negativeCredit: 'first-divergence' } });
    expect(whole.samples[1]!.responseMask).toEqual([1, 1, 1]);
    expect(narrowed.samples[1]!.responseMask).toEqual([1, 1, 0]);
    expect(narrowed.samples.map((s) => s.advantage)).toEqual(whole.samples.map((s) => s.advantage));
    expect(() => buildTrainingSamples({ trajectories, advantage: { negativeCredit: 'last' as never } })).toThrow(
      /unknown negativeCredit "last"; use 'whole-response' or 'first-divergence'/,
    );
  });
});
