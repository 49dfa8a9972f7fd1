import type {
  JsonObject,
  JsonValue,
  LightningStore,
  Rollout,
  RolloutConfigInput,
  RolloutMode,
  Span,
  Trajectory,
} from '@agl/core';
import { taskIdOf } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import { sleep } from '../runner/idle-gate';
import type { TraceAdapter } from './algorithm';

/** One rollout to enqueue, as `LightningStore.enqueueRollouts` takes it. */
export type RolloutRequest = Parameters<LightningStore['enqueueRollouts']>[0][number];

/** What {@link taskRequest} puts on a task's rollout besides its input. */
export interface TaskRequestOptions {
  mode: RolloutMode;
  resourcesId: string | null;
  /** More metadata; `task_id` is always core's `taskIdOf({ input: task })` (DESIGN Contract 3). */
  metadata?: JsonObject;
  config?: RolloutConfigInput;
}

/** The enqueue request for one task: its input, mode, resources and `metadata.task_id`. */
export function taskRequest(task: unknown, options: TaskRequestOptions): RolloutRequest {
  const metadata: JsonObject = { task_id: taskIdOf({ input: task }), ...options.metadata };
  return {
    input: task as JsonValue,
    mode: options.mode,
    resourcesId: options.resourcesId,
    ...(options.config !== undefined ? { config: options.config } : {}),
    metadata,
  };
}

/** How long {@link RolloutBatch.drain} keeps waiting. */
export interface DrainOptions {
  /** True while more rollouts may still be enqueued: drain waits for them too (default: none will). */
  more?: () => boolean;
  /** Stop waiting after this many seconds; rollouts still running are left out of the result. */
  timeoutSeconds?: number;
  /** Clock in epoch seconds, for the timeout (default `Date.now() / 1000`). */
  now?: () => number;
  /** Called with each rollout as it finishes, in finishing order. */
  onFinished?: (rollout: Rollout) => void | Promise<void>;
}

/**
 * The loop every algorithm runs against the store: enqueue rollouts, wait for them to finish, read each one's latest
 * attempt's spans and adapt them. Baseline, GRPO and APO's evaluator all drive their rollouts through it.
 */
export class RolloutBatch {
  readonly #store: LightningStore;
  readonly #signal: AbortSignal;
  readonly #waitSeconds: number;
  readonly #pollSeconds: number;
  readonly #pending = new Set<string>();

  /**
   * `waitSeconds`: how long one wait call may block (default 0.5), so aborts and new rollouts are seen soon;
   * `pollSeconds`: the pause while nothing is pending but more may come (default 0.05).
   */
  constructor(options: { store: LightningStore; signal: AbortSignal; waitSeconds?: number; pollSeconds?: number }) {
    this.#store = options.store;
    this.#signal = options.signal;
    this.#waitSeconds = options.waitSeconds ?? 0.5;
    this.#pollSeconds = options.pollSeconds ?? 0.05;
  }

  /** Rollouts enqueued or tracked that have not finished yet. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Enqueues `requests` (in one call) and waits for them with the rest; returns them in request order. */
  async enqueue(requests: readonly RolloutRequest[]): Promise<Rollout[]> {
    if (requests.length === 0) return [];
    const created = await this.#store.enqueueRollouts([...requests]);
    for (const rollout of created) this.#pending.add(rollout.rolloutId);
    return created;
  }

  /** Waits for rollouts enqueued elsewhere too (e.g. reused from an earlier run). */
  track(rolloutIds: Iterable<string>): void {
    for (const id of rolloutIds) this.#pending.add(id);
  }

  /**
   * Waits until every pending rollout has finished and `more()` is false, the signal aborts, or the timeout passes.
   * Returns the rollouts that finished, by id; those still pending stay in {@link pending}.
   */
  async drain(options: DrainOptions = {}): Promise<Map<string, Rollout>> {
    const now = options.now ?? (() => Date.now() / 1000);
    const deadline = options.timeoutSeconds === undefined ? Infinity : now() + options.timeoutSeconds;
    const finished = new Map<string, Rollout>();
    while (!this.#signal.aborted && (this.#pending.size > 0 || options.more?.() === true)) {
      const left = deadline - now();
      if (left <= 0) break;
      if (this.#pending.size === 0) {
        await sleep(Math.min(this.#pollSeconds, left) * 1000, this.#signal);
        continue;
      }
      const timeoutSeconds = Math.min(this.#waitSeconds, left);
      for (const rollout of await this.#store.waitForRollouts([...this.#pending], { timeoutSeconds })) {
        if (!this.#pending.delete(rollout.rolloutId)) continue;
        finished.set(rollout.rolloutId, rollout);
        await options.onFinished?.(rollout);
      }
    }
    return finished;
  }

  /** The spans of a rollout's latest attempt, in sequence order. */
  async spansOf(rolloutId: string): Promise<Span[]> {
    return (await this.#store.querySpans({ rolloutId, attemptId: 'latest', sortBy: 'sequenceId' })).items;
  }

  /** A finished rollout's trajectory: its latest attempt's spans through `adapter`. */
  async trajectoryOf(rollout: Rollout, adapter: TraceAdapter): Promise<Trajectory> {
    return adapter.adapt(await this.spansOf(rollout.rolloutId), rollout);
  }
}

/** A batch of rollouts in flight: {@link RolloutBatchRun.finish} waits for them and returns their trajectories. */
export interface RolloutBatchRun {
  /** The rollouts, in request order. */
  readonly created: Rollout[];
  /** Waits for every rollout; returns their trajectories in request order (a `UserError` naming `who` on abort). */
  finish(): Promise<Trajectory[]>;
}

/** Enqueues `requests` now; waiting for them is left to {@link RolloutBatchRun.finish} (sampling overlaps the caller). */
export async function startRolloutBatch(options: {
  store: LightningStore;
  signal: AbortSignal;
  requests: readonly RolloutRequest[];
  adapter: TraceAdapter;
  who: string;
}): Promise<RolloutBatchRun> {
  const batch = new RolloutBatch(options);
  const created = await batch.enqueue(options.requests);
  return {
    created,
    finish: async () => {
      const finished = await batch.drain();
      if (batch.pending > 0)
        throw new UserError(
          `${options.who} was stopped while waiting for ${batch.pending} rollouts: ${String(options.signal.reason)}`,
        );
      const out: Trajectory[] = [];
      for (const { rolloutId } of created)
        out.push(await batch.trajectoryOf(finished.get(rolloutId)!, options.adapter));
      return out;
    },
  };
}

/**
 * Enqueues `requests`, waits for all of them and returns their trajectories in request order. Throws a `UserError`
 * naming `who` when the signal aborts first.
 */
export async function runRolloutBatch(options: {
  store: LightningStore;
  signal: AbortSignal;
  requests: readonly RolloutRequest[];
  adapter: TraceAdapter;
  who: string;
}): Promise<Trajectory[]> {
  return (await startRolloutBatch(options)).finish();
}
