import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonValue, LightningStore, NamedResourcesInput, RolloutMode, Trajectory } from '@agl/core';
import type { NegativeCredit, TrainingBackend, TrainMetrics } from '@agl/core/algorithms';
import type { AgentMatch } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import { seededRandom } from '@agl/core/random';
import type { Algorithm, AlgorithmRunOptions } from './algorithm';
import { canonicalOrder, offPolicyLag, roundSamples, type SampleEstimator } from './grpo-samples';
import { runRolloutBatch, startRolloutBatch, taskRequest } from './rollout-batch';

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
  /** The resources version the round's rollouts sampled from. */
  sampledFrom?: string;
  /** Optimizer steps between the weights that sampled this round and those it trained (0 = on-policy). */
  lag?: number;
  /** Samples left out because they were more than `maxStepsOffPolicy` steps behind. */
  droppedStale?: number;
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
  /** Advantages: `grpo` (default), `rloo` (leave-one-out), or `rejection-sampling` (best of each group, see `minReward`). */
  estimator?: SampleEstimator;
  /** `rejection-sampling`: the lowest reward a kept rollout may have. Default 1. */
  minReward?: number;
  /** Train only these agents' transitions in a multi-agent run (a RegExp is searched, a string must equal the name). */
  agentMatch?: AgentMatch | null;
  /**
   * Off-policy bound. 0 (default): synchronous, each round samples the weights the previous round trained. K > 0: up
   * to K rounds' rollouts are in flight ahead of the round training (each samples the version current when it was
   * enqueued), and rounds train in the order their rollouts finish; a round whose samples came from weights more than
   * K optimizer steps behind the ones being trained (e.g. held up by a slow runner) is dropped (`droppedStale`).
   */
  maxStepsOffPolicy?: number;
  /** The algorithm's name in logs and records. Default `grpo` (`rloo`, `rejection-sampling` for those estimators). */
  name?: string;
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
  /** Resources versions published so far (the policy version); absent in older files (= `round`). */
  version?: number;
}

/** A round whose rollouts are enqueued: what it sampled from and where its trajectories come from. */
interface RoundInFlight {
  round: number;
  started: number;
  /** Its trajectories, in request order, once every rollout finished (waiting starts at enqueue). */
  trajectories: Promise<Trajectory[]>;
  /** Resolves (never rejects) when `trajectories` settles; `finished` is then true. */
  settled: Promise<void>;
  finished: boolean;
  resourcesId: string | null;
  version: number;
}

/**
 * GRPO against the store (AGL's RL loop on the embedded policy): each round enqueues `groupSize` rollouts of
 * `tasksPerRound` train tasks (with `metadata.task_id`), waits for them, builds trajectory-level samples with GRPO
 * advantages, trains the backend, and publishes the new LLM resources; it validates every `valEvery` rounds, writes a
 * metrics JSONL, keeps the best round by validation reward, and resumes from `state.json` after a crash.
 */
export class GRPO implements Algorithm {
  readonly name: string;
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
    const k = options.maxStepsOffPolicy;
    if (k !== undefined && (!Number.isInteger(k) || k < 0))
      throw new UserError(
        `GRPO maxStepsOffPolicy must be an integer ≥ 0 (0 = synchronous); got ${String(k)}. Use 0, or 1 to let sampling overlap training.`,
      );
    this.#o = options;
    this.name = options.name ?? (options.estimator && options.estimator !== 'grpo' ? options.estimator : 'grpo');
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
    const maxLag = o.maxStepsOffPolicy ?? 0;
    let version = state.version ?? state.round;
    const enqueue = async (round: number): Promise<RoundInFlight> => {
      const picks = Array.from({ length: o.tasksPerRound ?? 8 }, () => train[Math.floor(rng() * train.length)]);
      const requests = picks.flatMap((task) =>
        Array.from({ length: o.groupSize ?? 8 }, () =>
          taskRequest(task, { mode: 'train', resourcesId, metadata: { round } }),
        ),
      );
      const run = await startRolloutBatch({ store, signal, requests, adapter, who: 'GRPO' });
      const inFlightRound: RoundInFlight = {
        round,
        started: Date.now(),
        trajectories: run.finish(),
        settled: Promise.resolve(),
        finished: false,
        resourcesId,
        version,
      };
      inFlightRound.settled = inFlightRound.trajectories.then(
        () => void (inFlightRound.finished = true),
        () => void (inFlightRound.finished = true),
      );
      return inFlightRound;
    };
    // Up to K rounds are in flight ahead of the one training (K = 0: none, synchronous); each samples the version
    // current when it was enqueued. The round whose rollouts finish first trains first (the lowest such round on a
    // tie), so a round held up by a slow runner falls behind, and one more than K steps behind is dropped.
    const inFlight: RoundInFlight[] = [];
    let nextRound = state.round + 1;
    let done = state.round;
    const topUp = async (ahead: number): Promise<void> => {
      while (inFlight.length < ahead && nextRound <= total && !signal.aborted)
        inFlight.push(await enqueue(nextRound++));
    };
    await topUp(1);
    while (inFlight.length > 0) {
      await Promise.race(inFlight.map((r) => r.settled));
      const current = inFlight.find((r) => r.finished) ?? inFlight[0]!;
      inFlight.splice(inFlight.indexOf(current), 1);
      const round = current.round;
      const trajectories = canonicalOrder(await current.trajectories);
      // Off-policy (K > 0): the next rounds sample the current weights while this one trains.
      await topUp(maxLag);
      const { lag, keep } = offPolicyLag(current.version, version, maxLag);
      const built = roundSamples(trajectories, o, rng);
      const samples = keep ? built : [];
      const result = samples.length > 0 ? await o.backend.train(samples, { signal }) : null;
      if (result) {
        resourcesId = (await store.addResources(result.resources)).resourcesId;
        state.resources = result.resources;
        version += 1;
        state.version = version;
      }
      done += 1;
      const record: GrpoRoundRecord = {
        round,
        seconds: (Date.now() - current.started) / 1000,
        trainReward: meanOf(trajectories.map((t) => t.finalReward ?? 0)),
        nSamples: samples.length,
        metrics: result?.metrics ?? null,
        resourcesId: resourcesId ?? '',
        ...(current.resourcesId !== null ? { sampledFrom: current.resourcesId } : {}),
        lag,
        droppedStale: keep ? 0 : built.length,
      };
      if (val.length > 0 && (done === total || (valEvery > 0 && done % valEvery === 0)))
        record.valReward = await validate(done);
      state.round = done;
      this.rounds.push(record);
      if (dir) {
        await appendFile(join(dir, 'metrics.jsonl'), `${JSON.stringify(record)}\n`);
        const saved = await o.backend.saveCheckpoint?.({ path: join(dir, 'trainer.ckpt'), meta: { round: done } });
        if (saved !== false) await writeJson(join(dir, 'state.json'), state as unknown as JsonValue);
      }
      o.onRound?.(record);
      await topUp(1);
    }
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

function meanOf(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length;
}

async function writeJson(path: string, value: JsonValue): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(value, null, 2));
  await rename(`${path}.tmp`, path);
}
