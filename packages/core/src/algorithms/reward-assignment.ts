import { ValidationError } from '../errors/index';
import type { Trajectory } from '../schema/index';

/**
 * How rewards reach the transitions of an attempt:
 * - `final`: the trajectory's final reward is the only reward, earned by the last call; with the default discount 1
 *   every transition gets it (AGL's "identical assignment");
 * - `intermediate`: each transition earns the reward matched to it (AGL 0.3 rules), `null` counting as 0.
 */
export type RewardMode = 'final' | 'intermediate';

/** Options of {@link assignRewards}. */
export interface AssignRewardsOptions {
  /** The attempt's transitions and final reward. */
  trajectory: Pick<Trajectory, 'transitions' | 'finalReward'>;
  /** Default `final`. */
  mode?: RewardMode;
  /**
   * γ in [0, 1] (default 1). Each transition's return is `G_t = r_t + γ·G_{t+1}`. In `final` mode that is
   * `γ^(T−1−t)·R`; in `intermediate` mode γ = 0 keeps each reward where it was emitted, γ = 1 sums the rewards to go.
   */
  discount?: number;
  /** Reward used when the trajectory has none at all (verl's `reward_fillna_value`). Default 0. */
  fillValue?: number;
}

/** What {@link assignRewards} returns. */
export interface AssignedRewards {
  /** `r_t`: the reward each transition earned itself. */
  stepRewards: number[];
  /** `G_t`: the (discounted) return from transition t on; what samples are scored with. */
  returns: number[];
  /** The final reward used (after the fallback rules and `fillValue`). */
  finalReward: number;
  /** False when neither a final nor an intermediate reward was present and `fillValue` stood in. */
  hasReward: boolean;
}

/**
 * The final reward of a trajectory: `finalReward`, else the reward of the last transition that has one (AGL 0.3's VERL
 * daemon), else `null`.
 */
export function resolveFinalReward(trajectory: Pick<Trajectory, 'transitions' | 'finalReward'>): number | null {
  if (trajectory.finalReward !== null && Number.isFinite(trajectory.finalReward)) return trajectory.finalReward;
  for (let i = trajectory.transitions.length - 1; i >= 0; i--) {
    const reward = trajectory.transitions[i]?.reward;
    if (reward !== null && reward !== undefined && Number.isFinite(reward)) return reward;
  }
  return null;
}

/**
 * Assigns a reward and a return to every transition of one trajectory (pure).
 *
 * @throws ValidationError when `discount` is outside [0, 1] or `fillValue` is not finite.
 */
export function assignRewards(options: AssignRewardsOptions): AssignedRewards {
  const { trajectory, mode = 'final', discount = 1, fillValue = 0 } = options;
  if (!(discount >= 0 && discount <= 1)) {
    throw new ValidationError(`discount must be within [0, 1], got ${discount}; pass e.g. 1 (no discount) or 0.99`, [
      { path: 'discount', message: 'must be within [0, 1]' },
    ]);
  }
  if (!Number.isFinite(fillValue)) {
    throw new ValidationError(`fillValue must be a finite number, got ${fillValue}`, [
      { path: 'fillValue', message: 'must be finite' },
    ]);
  }
  const n = trajectory.transitions.length;
  const resolved = resolveFinalReward(trajectory);
  const finalReward = resolved ?? fillValue;
  const stepRewards = new Array<number>(n).fill(0);
  if (n > 0) {
    if (mode === 'final') {
      stepRewards[n - 1] = finalReward;
    } else {
      trajectory.transitions.forEach((t, i) => {
        stepRewards[i] = t.reward !== null && Number.isFinite(t.reward) ? t.reward : 0;
      });
      // The final reward belongs to the last call when no span reward was matched to it (Contract 3).
      const last = trajectory.transitions[n - 1];
      if (last && (last.reward === null || !Number.isFinite(last.reward))) stepRewards[n - 1] = finalReward;
    }
  }
  const returns = new Array<number>(n).fill(0);
  let running = 0;
  for (let i = n - 1; i >= 0; i--) {
    running = (stepRewards[i] ?? 0) + discount * running;
    returns[i] = running;
  }
  return { stepRewards, returns, finalReward, hasReward: resolved !== null };
}
