import { ValidationError } from '../errors/index';
import { grpoAdvantages } from './grpo-advantages';
import { rlooAdvantages } from './rloo-advantages';
import { trainedTokenCount, type TrainingSample } from './training-sample';

/** Outcome estimators: one scalar advantage per scored unit. */
export type OutcomeEstimator = 'grpo' | 'rloo';

/** Options shared by the sample-level and rollout-level advantage functions. */
export interface AdvantageOptions {
  samples: readonly TrainingSample[];
  /** Default `grpo`. */
  estimator?: OutcomeEstimator;
  /** GRPO only: divide by the group std. Default true. */
  normalizeByStd?: boolean;
  /** GRPO only: added to the std. Default 1e-6. */
  epsilon?: number;
}

function estimate(options: AdvantageOptions, scores: number[], groupIds: string[]): number[] {
  const { estimator = 'grpo', normalizeByStd, epsilon } = options;
  if (estimator === 'rloo') return rlooAdvantages({ scores, groupIds });
  if (estimator === 'grpo') {
    return grpoAdvantages({
      scores,
      groupIds,
      ...(normalizeByStd !== undefined ? { normalizeByStd } : {}),
      ...(epsilon !== undefined ? { epsilon } : {}),
    });
  }
  throw new ValidationError(`unknown advantage estimator ${JSON.stringify(estimator)}; use 'grpo' or 'rloo'`, [
    { path: 'estimator', message: "must be 'grpo' or 'rloo'" },
  ]);
}

/**
 * Sample-level advantages (vanilla verl): every sample is its own group member, scored with its `reward`, grouped by
 * `groupId`. Returns new samples; the input is not changed.
 */
export function sampleAdvantages(options: AdvantageOptions): TrainingSample[] {
  const { samples } = options;
  const advantages = estimate(
    options,
    samples.map((s) => s.reward),
    samples.map((s) => s.groupId),
  );
  return samples.map((s, i) => ({ ...s, advantage: advantages[i] ?? 0 }));
}

/** Counters of {@link rolloutLevelAdvantages} (AGL 1.0's rollout-level metrics). */
export interface RolloutLevelStats {
  nRows: number;
  nRollouts: number;
  /** Rollouts that produced more than one row. */
  nMultiRowRollouts: number;
  maxRowsPerRollout: number;
}

/**
 * Rollout-level advantages (AGL 1.0 §2.6): rows are grouped by `rolloutId`; every row of a rollout must share its
 * `groupId` and `reward`. One representative per rollout (its first row) is scored, so GRPO/RLOO statistics are taken
 * over rollouts within a group, not over rows; the rollout's advantage is then given to each of its rows.
 *
 * @throws ValidationError when rows of one rollout disagree on `groupId` or `reward` (use reward mode `final`, or
 * sample-level advantages, for intermediate rewards).
 */
export function rolloutLevelAdvantages(options: AdvantageOptions): {
  samples: TrainingSample[];
  stats: RolloutLevelStats;
} {
  const { samples } = options;
  const rows = new Map<string, number[]>();
  samples.forEach((s, i) => {
    const list = rows.get(s.rolloutId);
    if (list) list.push(i);
    else rows.set(s.rolloutId, [i]);
  });
  const rolloutIds = [...rows.keys()];
  const representatives = rolloutIds.map((id) => {
    const indices = rows.get(id) as number[];
    const first = samples[indices[0] as number] as TrainingSample;
    for (const i of indices) {
      const row = samples[i] as TrainingSample;
      if (row.groupId !== first.groupId || row.reward !== first.reward) {
        throw new ValidationError(
          `rows of rollout ${id} disagree (groupId ${JSON.stringify(first.groupId)} vs ${JSON.stringify(row.groupId)}, ` +
            `reward ${first.reward} vs ${row.reward}); rollout-level advantage needs one group and one reward per rollout: ` +
            `use reward mode 'final' or sample-level advantages`,
          [{ path: 'samples', message: `rollout ${id} has inconsistent rows` }],
        );
      }
    }
    return first;
  });
  const advantages = estimate(
    options,
    representatives.map((r) => r.reward),
    representatives.map((r) => r.groupId),
  );
  const byRollout = new Map(rolloutIds.map((id, i) => [id, advantages[i] ?? 0]));
  const counts = [...rows.values()].map((l) => l.length);
  return {
    samples: samples.map((s) => ({ ...s, advantage: byRollout.get(s.rolloutId) ?? 0 })),
    stats: {
      nRows: samples.length,
      nRollouts: rows.size,
      nMultiRowRollouts: counts.filter((c) => c > 1).length,
      maxRowsPerRollout: counts.length === 0 ? 0 : Math.max(...counts),
    },
  };
}

/**
 * Per-rollout loss normalisation (AGL 1.0's `per_rollout_mean`): each row's advantage is divided by
 * `max(1, T_r × N)`, where `T_r` is the total trained (mask-1) tokens of the row's rollout over all its rows and `N`
 * the number of rows with at least one trained token. With a masked-sum loss, every rollout then contributes its
 * token-mean objective with equal weight, however many rows or tokens it produced. Returns new samples.
 */
export function normalisePerRolloutLoss(options: { samples: readonly TrainingSample[] }): TrainingSample[] {
  const { samples } = options;
  const tokensByRollout = new Map<string, number>();
  let trainedRows = 0;
  for (const s of samples) {
    const n = trainedTokenCount(s);
    if (n > 0) trainedRows += 1;
    tokensByRollout.set(s.rolloutId, (tokensByRollout.get(s.rolloutId) ?? 0) + n);
  }
  return samples.map((s) => {
    const denominator = Math.max(1, (tokensByRollout.get(s.rolloutId) ?? 0) * trainedRows);
    return { ...s, advantage: s.advantage / denominator };
  });
}
