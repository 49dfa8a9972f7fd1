import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue, LightningStore, NamedResourcesInput, RolloutMode, Trajectory } from '@agl/core';
import {
  buildTrainingSamples,
  type NegativeCredit,
  type TrainingBackend,
  type TrainingSample,
  type TrainMetrics,
} from '@agl/core/algorithms';
import { UserError } from '@agl/core/errors';
import { seededRandom } from '@agl/core/random';
import type { Algorithm, AlgorithmRunOptions } from './algorithm';
import { runRolloutBatch, taskRequest } from './rollout-batch';

/** @deprecated Use {@link AlgorithmRunOptions}: GRPO takes what every algorithm takes. */
export type GrpoRunOptions = AlgorithmRunOptions;

/** One round's record (a line of the metrics JSONL). */
export interface GrpoRoundRecord {
  round: number;
  seconds: number;
  trainReward: number;
  nSamples: number;
  metrics: TrainMetrics | null;
  valReward?: number;
  resourcesId: string;
}

/** A training backend that can also checkpoint itself (e.g. `TinkerTrainingBackend`). */
export type GrpoBackend = TrainingBackend & {
  /**
   * Saves what a resume needs at `path`. Returning `false` means nothing was saved this round (e.g. Tinker's
   * `save_weights` every N rounds): GRPO then keeps the previous resumable state, and a resume repeats the rounds since.
   */
  saveCheckpoint?(options: { path: string; meta?: Record<string, unknown> }): Promise<void | boolean>;
  /** On resume, before anything else: restore the state `saveCheckpoint` saved at `path` (Tinker: `load_weights`). */
  restore?(options: { path: string }): Promise<void>;
  /** On resume: the resources that route to the weights served now (endpoints may have moved since the crash). */
  currentResources?(): NamedResourcesInput | null;
};

/** Options of {@link GRPO}. */
export interface GrpoOptions {
  backend: GrpoBackend;
  /** Rounds (policy updates). Default 10. */
  rounds?: number;
  /** Train tasks per round. Default 8. */
  tasksPerRound?: number;
  /** Rollouts per task (the GRPO group). Default 8. */
  groupSize?: number;
  /** Validate every N rounds (and before the first and after the last). 0 = only before and after. Default 5. */
  valEvery?: number;
  /** Seeds the task sampling. Default 0. */
  seed?: number;
  /** Directory for `metrics.jsonl`, `state.json` (resume), `trainer.ckpt` and `best.json`. None = no files. */
  checkpointDir?: string;
  /** Controls: `shuffled-rewards` permutes final rewards across the round's rollouts; `zero-advantages` trains on 0. */
  control?: 'none' | 'shuffled-rewards' | 'zero-advantages';
  /**
   * Which tokens of a worse-than-average rollout carry its negative advantage: all it produced (`whole-response`,
   * default) or those up to its first divergence from a better rollout of its group (`first-divergence`).
   */
  negativeCredit?: NegativeCredit;
  /** Sequence limits for samples. */
  maxPromptLength?: number;
  maxResponseLength?: number;
  /** Called after each round (progress printing). */
  onRound?: (record: GrpoRoundRecord) => void;
  /** Called with each validation reward (`round` 0 = before training). */
  onValidation?: (result: { round: number; reward: number }) => void;
}

interface GrpoState {
  round: number;
  resources: NamedResourcesInput | null;
  bestReward: number | null;
  bestRound: number | null;
  validations: Array<{ round: number; reward: number }>;
}

/**
 * GRPO against the store (AGL's RL loop on the embedded policy): each round enqueues `groupSize` rollouts of
 * `tasksPerRound` train tasks (with `metadata.task_id`), waits for them, builds trajectory-level samples with GRPO
 * advantages, trains the backend, and publishes the new LLM resources; it validates every `valEvery` rounds, writes a
 * metrics JSONL, keeps the best round by validation reward, and resumes from `state.json` after a crash.
 */
export class GRPO implements Algorithm {
  readonly name = 'grpo';
  readonly #o: GrpoOptions;
  /** Validation rewards, in order (`round` 0 = before training). */
  readonly validations: Array<{ round: number; reward: number }> = [];
  /** Round records, in order. */
  readonly rounds: GrpoRoundRecord[] = [];

  constructor(options: GrpoOptions) {
    for (const key of ['rounds', 'tasksPerRound', 'groupSize'] as const) {
      const v = options[key];
      if (v !== undefined && (!Number.isInteger(v) || v < (key === 'rounds' ? 0 : 1)))
        throw new UserError(`GRPO ${key} must be a positive integer; got ${String(v)}.`);
    }
    this.#o = options;
  }

  /** The state saved in `checkpointDir` (null when there is none): the round to resume after. */
  static async readState(checkpointDir: string): Promise<GrpoState | null> {
    try {
      return JSON.parse(await readFile(join(checkpointDir, 'state.json'), 'utf8')) as GrpoState;
    } catch {
      return null;
    }
  }

  async run({ store, train, val, adapter, initialResources, signal }: AlgorithmRunOptions): Promise<void> {
    const o = this.#o;
    if (train.length === 0)
      throw new UserError('GRPO needs train tasks: pass a non-empty train dataset to Trainer.fit.');
    const dir = o.checkpointDir;
    if (dir) await mkdir(dir, { recursive: true });
    const resumed = dir ? await GRPO.readState(dir) : null;
    const state: GrpoState = resumed ?? {
      round: 0,
      resources: initialResources ?? null,
      bestReward: null,
      bestRound: null,
      validations: [],
    };
    this.validations.push(...state.validations);
    if (resumed && dir) await o.backend.restore?.({ path: join(dir, 'trainer.ckpt') });
    if (resumed) state.resources = o.backend.currentResources?.() ?? state.resources;
    let resourcesId: string | null = state.resources ? (await store.addResources(state.resources)).resourcesId : null;
    const rng = seededRandom(Math.floor(o.seed ?? 0) ^ 0x9e3779b9); // the stream tiny-llm's SeededRng drew
    for (let i = 0; i < state.round * (o.tasksPerRound ?? 8); i += 1) rng(); // replay the task draws
    const total = o.rounds ?? 10;
    const valEvery = o.valEvery ?? 5;
    const validate = async (round: number): Promise<number> => {
      const reward = await this.#validate({ store, val, adapter, resourcesId, signal, round });
      state.validations.push({ round, reward });
      this.validations.push({ round, reward });
      o.onValidation?.({ round, reward });
      if (round > 0 && (state.bestReward === null || reward > state.bestReward) && dir) {
        state.bestReward = reward;
        state.bestRound = round;
        await writeJson(join(dir, 'best.json'), { round, reward, resources: state.resources as JsonValue });
      }
      return reward;
    };
    if (state.round === 0 && val.length > 0) await validate(0);
    for (let round = state.round + 1; round <= total && !signal.aborted; round += 1) {
      const started = Date.now();
      const picks = Array.from({ length: o.tasksPerRound ?? 8 }, () => train[Math.floor(rng() * train.length)]);
      const trajectories = await this.#runRollouts({
        store,
        tasks: picks,
        repeat: o.groupSize ?? 8,
        mode: 'train',
        resourcesId,
        adapter,
        signal,
        round,
      });
      const samples = this.#samples(trajectories, rng);
      const result = samples.length > 0 ? await o.backend.train(samples, { signal }) : null;
      if (result) {
        resourcesId = (await store.addResources(result.resources)).resourcesId;
        state.resources = result.resources;
      }
      const record: GrpoRoundRecord = {
        round,
        seconds: (Date.now() - started) / 1000,
        trainReward: meanOf(trajectories.map((t) => t.finalReward ?? 0)),
        nSamples: samples.length,
        metrics: result?.metrics ?? null,
        resourcesId: resourcesId ?? '',
      };
      if (val.length > 0 && (round === total || (valEvery > 0 && round % valEvery === 0)))
        record.valReward = await validate(round);
      state.round = round;
      this.rounds.push(record);
      if (dir) {
        await appendFile(join(dir, 'metrics.jsonl'), `${JSON.stringify(record)}\n`);
        const saved = await o.backend.saveCheckpoint?.({ path: join(dir, 'trainer.ckpt'), meta: { round } });
        if (saved !== false) await writeJson(join(dir, 'state.json'), state as unknown as JsonValue);
      }
      o.onRound?.(record);
    }
  }

  #samples(trajectories: Trajectory[], rng: () => number): TrainingSample[] {
    const o = this.#o;
    let input = trajectories;
    if (o.control === 'shuffled-rewards') {
      const rewards = trajectories.map((t) => t.finalReward);
      for (let i = rewards.length - 1; i > 0; i -= 1) {
        const j = Math.floor(rng() * (i + 1));
        [rewards[i], rewards[j]] = [rewards[j]!, rewards[i]!];
      }
      input = trajectories.map((t, i) => ({
        ...t,
        finalReward: rewards[i] ?? null,
        transitions: t.transitions.map((tr) => ({ ...tr, reward: null })),
      }));
    }
    const { samples } = buildTrainingSamples({
      trajectories: input,
      level: 'trajectory',
      reward: { mode: 'final', discount: 1, fillValue: 0 },
      advantage: { estimator: 'grpo', normalizeByStd: true, negativeCredit: o.negativeCredit },
      ...(o.maxPromptLength !== undefined ? { maxPromptLength: o.maxPromptLength } : {}),
      ...(o.maxResponseLength !== undefined ? { maxResponseLength: o.maxResponseLength } : {}),
    });
    return o.control === 'zero-advantages' ? samples.map((s) => ({ ...s, advantage: 0 })) : samples;
  }

  async #validate(a: {
    store: LightningStore;
    val: unknown[];
    adapter: AlgorithmRunOptions['adapter'];
    resourcesId: string | null;
    signal: AbortSignal;
    round: number;
  }): Promise<number> {
    const trajectories = await this.#runRollouts({ ...a, tasks: a.val, repeat: 1, mode: 'val' });
    return meanOf(trajectories.map((t) => t.finalReward ?? 0));
  }

  async #runRollouts(a: {
    store: LightningStore;
    tasks: unknown[];
    repeat: number;
    mode: RolloutMode;
    resourcesId: string | null;
    adapter: AlgorithmRunOptions['adapter'];
    signal: AbortSignal;
    round: number;
  }): Promise<Trajectory[]> {
    const requests = a.tasks.flatMap((task) =>
      Array.from({ length: a.repeat }, () =>
        taskRequest(task, { mode: a.mode, resourcesId: a.resourcesId, metadata: { round: a.round } }),
      ),
    );
    return canonicalOrder(await runRolloutBatch({ ...a, requests, who: 'GRPO' }));
  }
}

/**
 * Trajectories grouped by task (in enqueue order of each task's first rollout), each group sorted by what the policy
 * said: which rollout of a task got which sample depends on arrival order, so this makes a round's training batch,
 * and with the tiny server's `samplingSeed` the whole run, independent of timing.
 */
function canonicalOrder(trajectories: Trajectory[]): Trajectory[] {
  const groups = new Map<string, Array<{ t: Trajectory; k: string }>>();
  for (const t of trajectories) {
    const k = JSON.stringify([
      t.finalReward,
      t.transitions.map((tr) => tr.action.tokenIds ?? tr.action.message.content ?? null),
    ]);
    const group = groups.get(t.taskId) ?? [];
    group.push({ t, k });
    groups.set(t.taskId, group);
  }
  return [...groups.values()].flatMap((group) =>
    group.sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : 0)).map(({ t }) => t),
  );
}

function meanOf(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length;
}

async function writeJson(path: string, value: JsonValue): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(value, null, 2));
  await rename(`${path}.tmp`, path);
}
