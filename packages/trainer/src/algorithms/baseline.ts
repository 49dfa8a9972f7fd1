import type { LightningStore, Rollout, RolloutConfigInput, RolloutMode, Trajectory } from '@agl/core';
import { UserError } from '@agl/core/errors';
import type { Algorithm, AlgorithmRunOptions } from './algorithm';
import { sleep } from '../runner/idle-gate';
import { RolloutBatch, taskRequest } from './rollout-batch';

/** Options of {@link Baseline}. */
export interface BaselineOptions {
  /** Passes over train + val (default 1). */
  nEpochs?: number;
  /** Keep at most this many rollouts queuing/requeuing; new ones are enqueued in batches that fill the gap (default 16). */
  maxQueueLength?: number;
  /** Seconds between queue-length polls (default 0.05). */
  pollIntervalSeconds?: number;
  /** Rollout config for every rollout, or per task. */
  rolloutConfig?:
    RolloutConfigInput | ((task: unknown, index: number, mode: RolloutMode) => RolloutConfigInput | undefined);
  /** Called with each finished rollout's trajectory (latest attempt). */
  onTrajectory?: (trajectory: Trajectory, rollout: Rollout) => void;
}

/**
 * Runs every task once per epoch with no learning (AGL 0.3 `Baseline`): `train` as mode `train`, `val` as `val`,
 * posts the initial resources as `default`, keeps the queue short, and reads each rollout's trajectory back.
 */
export class Baseline implements Algorithm {
  readonly name = 'baseline';
  readonly #options: BaselineOptions;
  /** Trajectories of every finished rollout, in completion order. */
  readonly trajectories: Trajectory[] = [];
  /** Every rollout this algorithm enqueued, final state. */
  readonly rollouts: Rollout[] = [];

  constructor(options: BaselineOptions = {}) {
    const nEpochs = options.nEpochs ?? 1;
    if (!Number.isInteger(nEpochs) || nEpochs < 1)
      throw new UserError(`Baseline nEpochs must be an integer ≥ 1; got ${String(options.nEpochs)}.`);
    this.#options = options;
  }

  async run({ store, train, val, adapter, initialResources, signal }: AlgorithmRunOptions): Promise<void> {
    const samples: [unknown, RolloutMode, number][] = [
      ...train.map((t, i) => [t, 'train', i] as [unknown, RolloutMode, number]),
      ...val.map((t, i) => [t, 'val', i] as [unknown, RolloutMode, number]),
    ];
    if (samples.length === 0)
      throw new UserError('Baseline has nothing to run: both the train and val datasets are empty.');
    let resourcesId: string | null = null;
    if (initialResources) resourcesId = (await store.updateResources('default', initialResources)).resourcesId;
    const maxQueue = this.#options.maxQueueLength ?? 16;
    const pollMs = (this.#options.pollIntervalSeconds ?? 0.05) * 1000;
    for (let epoch = 0; epoch < (this.#options.nEpochs ?? 1) && !signal.aborted; epoch += 1) {
      const batch = new RolloutBatch({ store, signal, pollSeconds: pollMs / 1000 });
      let enqueued = false;
      const harvest = batch.drain({
        more: () => !enqueued,
        onFinished: async (rollout) => {
          this.rollouts.push(rollout);
          const trajectory = await batch.trajectoryOf(rollout, adapter);
          this.trajectories.push(trajectory);
          this.#options.onTrajectory?.(trajectory, rollout);
        },
      });
      try {
        let next = 0;
        while (next < samples.length && !signal.aborted) {
          const room = maxQueue - (await queueLength(store));
          if (room <= 0) {
            await sleep(pollMs, signal);
            continue;
          }
          const chunk = samples.slice(next, next + room);
          next += chunk.length;
          await batch.enqueue(
            chunk.map(([task, mode, index]) => {
              const config =
                typeof this.#options.rolloutConfig === 'function'
                  ? this.#options.rolloutConfig(task, index, mode)
                  : this.#options.rolloutConfig;
              return taskRequest(task, { mode, resourcesId, config: config ?? undefined, metadata: { epoch } });
            }),
          );
        }
      } finally {
        enqueued = true;
      }
      await harvest;
    }
  }
}

async function queueLength(store: LightningStore): Promise<number> {
  return (await store.queryRollouts({ statusIn: ['queuing', 'requeuing'], limit: 0 })).total;
}
