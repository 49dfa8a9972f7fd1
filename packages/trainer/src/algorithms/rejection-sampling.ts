import { resolveFinalReward, type TrainingBackend, type TrainingSample, type TrainMetrics } from '@agl/core/algorithms';
import { UserError } from '@agl/core/errors';
import type { NamedResourcesInput, Rollout, RolloutMode, Trajectory } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import type { Algorithm, AlgorithmRunOptions } from './algorithm';
import { RolloutBatch, taskRequest } from './rollout-batch';

/** Options of {@link RejectionSamplingFineTuning}. */
export interface RejectionSamplingOptions {
  /** Fine-tunes on the selected rollouts, e.g. `OpenAiFineTuningBackend` from `@agl/trainer/finetune`. */
  backend: TrainingBackend;
  /** Rollouts per training task per round (default 2). */
  samplesPerTask?: number;
  /** A task's best rollout is kept only if its reward is at least this (default 1). */
  minReward?: number;
  /** Most fine-tuning rounds (default 3). */
  maxRounds?: number;
  /** Stop after this many rounds in a row without a better validation score (default 1). */
  patience?: number;
  /** A round improves when its validation score beats the best by more than this (default 0). */
  minImprovement?: number;
  /** Scores a finished rollout (a judge); default: the trajectory's final reward. `null` counts as 0. */
  reward?: (trajectory: Trajectory, rollout: Rollout) => number | null | Promise<number | null>;
  /** Called after the baseline validation (round 0) and after each round. */
  onRound?: (report: RoundReport) => void;
}

/** What one round did. Round 0 is the validation of the starting resources. */
export interface RoundReport {
  round: number;
  /** The resources version this round published (round 0: the starting version). */
  resourcesId: string;
  /** The version the round's training rollouts ran with (round 0: `null`). */
  sampledFrom: string | null;
  nTrainRollouts: number;
  /** Rollouts selected for fine-tuning (the best of each task at or above `minReward`). */
  nSelected: number;
  trainMeanReward: number | null;
  /** Mean reward of the validation rollouts run with `resourcesId`. */
  valScore: number;
  improved: boolean;
  metrics: TrainMetrics | null;
}

interface Scored {
  rollout: Rollout;
  trajectory: Trajectory;
  reward: number;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Rejection-sampling fine-tuning for `Trainer.fit`: each round runs every training task `samplesPerTask` times with
 * the best resources so far, scores the rollouts (agent reward or a judge), fine-tunes on the best rollout of each
 * task, publishes the result as a new resources version, and runs the validation tasks with it. Every round is one
 * resources version, and its rollouts record the version they ran with (plus `metadata.round`). It stops after
 * `maxRounds`, when a round selects nothing, or when validation has not improved for `patience` rounds; the best
 * version is then made the latest again if a later round did worse.
 */
export class RejectionSamplingFineTuning implements Algorithm {
  readonly name = 'rejection-sampling';
  readonly #options: RejectionSamplingOptions;
  /** One report per round, round 0 first. */
  readonly rounds: RoundReport[] = [];
  /** Why the last run stopped. */
  stopReason: 'max-rounds' | 'patience' | 'no-samples' | 'aborted' | null = null;

  constructor(options: RejectionSamplingOptions) {
    for (const key of ['samplesPerTask', 'maxRounds', 'patience'] as const) {
      const v = options[key];
      if (v !== undefined && (!Number.isInteger(v) || v < 1))
        throw new UserError(`RejectionSamplingFineTuning ${key} must be an integer ≥ 1; got ${String(v)}.`);
    }
    this.#options = options;
  }

  async run({ store, train, val, adapter, initialResources, signal }: AlgorithmRunOptions): Promise<void> {
    if (train.length === 0 || val.length === 0)
      throw new UserError(
        'RejectionSamplingFineTuning needs training tasks to sample and validation tasks to decide when to stop; ' +
          `got ${train.length} train and ${val.length} val tasks.`,
      );
    const o = this.#options;
    const start = initialResources ? await store.addResources(initialResources) : await store.getLatestResources();
    if (!start)
      throw new UserError(
        'RejectionSamplingFineTuning needs starting resources: pass initialResources to the Trainer.',
      );
    const run = (tasks: unknown[], mode: RolloutMode, resourcesId: string, round: number) =>
      this.#runTasks({ store, adapter, signal, tasks, mode, resourcesId, round });
    let best = {
      resourcesId: start.resourcesId,
      resources: start.resources as NamedResourcesInput,
      score: mean((await run(val, 'val', start.resourcesId, 0)).map((s) => s.reward)),
    };
    this.#report({
      round: 0,
      resourcesId: best.resourcesId,
      sampledFrom: null,
      nTrainRollouts: 0,
      nSelected: 0,
      trainMeanReward: null,
      valScore: best.score,
      improved: false,
      metrics: null,
    });
    let stale = 0;
    let latestIsBest = true;
    this.stopReason = 'max-rounds';
    for (let round = 1; round <= (o.maxRounds ?? 3); round += 1) {
      if (signal.aborted) {
        this.stopReason = 'aborted';
        break;
      }
      const tasks = train.flatMap((t) => Array.from({ length: o.samplesPerTask ?? 2 }, () => t));
      const scored = await run(tasks, 'train', best.resourcesId, round);
      const selected = selectBest(scored, o.minReward ?? 1);
      if (selected.length === 0 || signal.aborted) {
        this.stopReason = signal.aborted ? 'aborted' : 'no-samples';
        break;
      }
      const result = await o.backend.train(selected.map(toSample), { signal });
      const resources = { ...best.resources, ...result.resources };
      const published = await store.addResources(resources);
      const score = mean((await run(val, 'val', published.resourcesId, round)).map((s) => s.reward));
      const improved = score > best.score + (o.minImprovement ?? 0);
      this.#report({
        round,
        resourcesId: published.resourcesId,
        sampledFrom: best.resourcesId,
        nTrainRollouts: scored.length,
        nSelected: selected.length,
        trainMeanReward: mean(scored.map((s) => s.reward)),
        valScore: score,
        improved,
        metrics: result.metrics,
      });
      latestIsBest = improved;
      if (improved) {
        best = { resourcesId: published.resourcesId, resources, score };
        stale = 0;
      } else if ((stale += 1) >= (o.patience ?? 1)) {
        this.stopReason = 'patience';
        break;
      }
    }
    if (!latestIsBest) await store.updateResources(best.resourcesId, best.resources);
  }

  #report(report: RoundReport): void {
    this.rounds.push(report);
    this.#options.onRound?.(report);
  }

  /** Enqueues the tasks with `resourcesId`, waits for all of them, and scores each rollout. */
  async #runTasks(o: {
    store: LightningStore;
    adapter: AlgorithmRunOptions['adapter'];
    signal: AbortSignal;
    tasks: unknown[];
    mode: RolloutMode;
    resourcesId: string;
    round: number;
  }): Promise<Scored[]> {
    const batch = new RolloutBatch({ store: o.store, signal: o.signal });
    await batch.enqueue(
      o.tasks.map((task) =>
        taskRequest(task, { mode: o.mode, resourcesId: o.resourcesId, metadata: { round: o.round } }),
      ),
    );
    const out: Scored[] = [];
    await batch.drain({
      onFinished: async (rollout) => {
        const trajectory = await batch.trajectoryOf(rollout, o.adapter);
        const reward = this.#options.reward
          ? await this.#options.reward(trajectory, rollout)
          : resolveFinalReward(trajectory);
        out.push({ rollout, trajectory, reward: reward ?? 0 });
      },
    });
    return out;
  }
}

/** The best-rewarded rollout of each task, if at least `minReward` (first finished wins ties). */
function selectBest(scored: Scored[], minReward: number): Scored[] {
  const best = new Map<string, Scored>();
  for (const s of scored) {
    const current = best.get(s.trajectory.taskId);
    if (s.reward >= minReward && (!current || s.reward > current.reward)) best.set(s.trajectory.taskId, s);
  }
  return [...best.values()];
}

/**
 * A rollout-level sample: hosted backends read the rollout back by `rolloutId`; token fields are empty because a
 * hosted model exposes no token ids.
 */
function toSample(s: Scored): TrainingSample {
  return {
    promptTokenIds: [],
    responseTokenIds: [],
    responseMask: [],
    advantage: 0,
    groupId: s.trajectory.taskId,
    taskId: s.trajectory.taskId,
    rolloutId: s.rollout.rolloutId,
    attemptId: s.trajectory.attemptId ?? '',
    mode: s.rollout.mode,
    reward: s.reward,
    turnIndices: s.trajectory.transitions.map((_, i) => i),
    agentName: s.trajectory.transitions[0]?.agentName ?? null,
  };
}
