import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/index';
import { call, trajectory } from './__fixtures__/trajectories';
import { assignRewards, resolveFinalReward } from './reward-assignment';

// Three calls; a reward 0.5 was matched to the middle call; the attempt's final reward is 1.
const t = trajectory({
  rolloutId: 'ro-1',
  taskId: 'task',
  transitions: [call({ reward: null }), call({ reward: 0.5 }), call({ reward: null })],
  finalReward: 1,
});

describe('assignRewards', () => {
  it('final mode gives the final reward to every transition (γ = 1)', () => {
    const r = assignRewards({ trajectory: t });
    // r = [0, 0, 1]; G_2 = 1, G_1 = 0 + 1·1 = 1, G_0 = 0 + 1·1 = 1
    expect(r.stepRewards).toEqual([0, 0, 1]);
    expect(r.returns).toEqual([1, 1, 1]);
    expect(r.finalReward).toBe(1);
    expect(r.hasReward).toBe(true);
  });

  it('final mode with a discount: G_t = γ^(T−1−t)·R', () => {
    const r = assignRewards({ trajectory: t, discount: 0.9 });
    // G_2 = 1, G_1 = 0.9·1 = 0.9, G_0 = 0.9·0.9 = 0.81
    expect(r.returns[0]).toBeCloseTo(0.81, 12);
    expect(r.returns[1]).toBeCloseTo(0.9, 12);
    expect(r.returns[2]).toBe(1);
  });

  it('intermediate mode keeps rewards where emitted; the final reward fills the last call', () => {
    // r = [0, 0.5, 1] (the last call had no matched reward, so it gets the final reward 1)
    const immediate = assignRewards({ trajectory: t, mode: 'intermediate', discount: 0 });
    expect(immediate.stepRewards).toEqual([0, 0.5, 1]);
    // γ = 0: G_t = r_t
    expect(immediate.returns).toEqual([0, 0.5, 1]);
    // γ = 1: G_2 = 1, G_1 = 0.5 + 1 = 1.5, G_0 = 0 + 1.5 = 1.5
    expect(assignRewards({ trajectory: t, mode: 'intermediate' }).returns).toEqual([1.5, 1.5, 1]);
    // γ = 0.5: G_2 = 1, G_1 = 0.5 + 0.5·1 = 1, G_0 = 0 + 0.5·1 = 0.5
    expect(assignRewards({ trajectory: t, mode: 'intermediate', discount: 0.5 }).returns).toEqual([0.5, 1, 1]);
  });

  it('intermediate mode does not add the final reward twice when the last call already carries one', () => {
    const u = trajectory({
      rolloutId: 'ro-2',
      taskId: 'task',
      transitions: [call({ reward: 0.25 }), call({ reward: 1 })],
      finalReward: 1,
    });
    // r = [0.25, 1]; G_1 = 1; G_0 = 0.25 + 1 = 1.25
    expect(assignRewards({ trajectory: u, mode: 'intermediate' }).returns).toEqual([1.25, 1]);
  });

  it('without a final reward, the last transition reward stands in (AGL 0.3 VERL daemon)', () => {
    const u = trajectory({
      rolloutId: 'ro-3',
      taskId: 'task',
      transitions: [call({ reward: 0.2 }), call({ reward: 0.7 }), call({ reward: null })],
    });
    expect(resolveFinalReward(u)).toBe(0.7);
    expect(assignRewards({ trajectory: u }).returns).toEqual([0.7, 0.7, 0.7]);
  });

  it('uses fillValue when there is no reward at all, and says so', () => {
    const u = trajectory({ rolloutId: 'ro-4', taskId: 'task', transitions: [call({}), call({})] });
    const r = assignRewards({ trajectory: u, fillValue: -1 });
    expect(r.returns).toEqual([-1, -1]);
    expect(r.hasReward).toBe(false);
  });

  it('handles an empty trajectory', () => {
    const u = trajectory({ rolloutId: 'ro-5', taskId: 'task', transitions: [], finalReward: 1 });
    expect(assignRewards({ trajectory: u })).toEqual({ stepRewards: [], returns: [], finalReward: 1, hasReward: true });
  });

  it('rejects a discount outside [0, 1] with the offending value', () => {
    expect(() => assignRewards({ trajectory: t, discount: 1.5 })).toThrow(ValidationError);
    expect(() => assignRewards({ trajectory: t, discount: 1.5 })).toThrow(/1\.5/);
    expect(() => assignRewards({ trajectory: t, fillValue: Number.NaN })).toThrow(/fillValue/);
  });
});
