import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NegativeCredit } from '@agl/core/algorithms';
import { UserError } from '@agl/core/errors';
import { startGateway } from '@agl/gateway';
import { SqliteStore } from '@agl/store/sqlite';
import { ServiceClient } from '@agl/tinker';
import { GRPO, startTinyServer, TinyTrainer, type GrpoRoundRecord, type TinyConfig } from '@agl/tiny-llm';
import { TinkerTrainingBackend, Trainer, type GrpoBackend } from '@agl/trainer';
import { calcAgent } from './calc-agent';
import { calcTokenizer, demonstration, HALF_PRODUCTS, makeTasks, type CALC_TOKENIZERS } from './calc-tasks';
import { rewardCurvePng } from './reward-curve-png';

/** Settings of one Calc-X run (every field has a default that finishes in a few minutes on 2 cores). */
export interface CalcXOptions {
  seed?: number;
  /** Warm start: SFT steps on self-generated demonstrations, and their batch size. */
  sftSteps?: number;
  sftBatchSize?: number;
  sftLearningRate?: number;
  /**
   * Stop the warm start early, at the first check (every 8 steps) where greedy decoding solves at least this share of
   * 128 probe tasks from the training operands (teacher-forced exact match; no validation task is looked at). With it,
   * `sftSteps` is the most the warm start may take; `null` runs all `sftSteps`.
   */
  sftStopAt?: number | null;
  /** GRPO. */
  rounds?: number;
  tasksPerRound?: number;
  groupSize?: number;
  valEvery?: number;
  rlLearningRate?: number;
  /** Decay the RL learning rate linearly from `rlLearningRate` (round 1) to this (the last round). Default: constant. */
  rlLearningRateEnd?: number;
  clipEps?: number;
  /** Policy updates per round: Tinker's path takes 1 (one `forward_backward` + `optim_step` a round). */
  stepsPerRound?: number;
  /** Sampling temperature of training rollouts, set by the trainer on the published LLM resource. */
  trainTemperature?: number;
  control?: 'none' | 'shuffled-rewards' | 'zero-advantages';
  /** Which tokens of a worse-than-average rollout carry its negative advantage (see `GrpoOptions.negativeCredit`). */
  negativeCredit?: NegativeCredit;
  /** Skip the warm start: copy the `warm` weights from this weights directory (e.g. an earlier run's `<workDir>/weights`). */
  warmStartFrom?: string;
  /** Held-out validation tasks. */
  valSize?: number;
  /** Concurrent rollouts (runner workers). */
  nRunners?: number;
  /** Policy shape: fields that differ from {@link DEFAULT_MODEL}. */
  model?: Partial<Omit<TinyConfig, 'vocabSize'>>;
  /**
   * Operator mix of the training tasks (demonstrations, probe and GRPO pool): a string of `+`, `-`, `*` where a repeat
   * weighs an operator up, e.g. `+-**` for half products. Default `+-*`. Validation tasks always use `+-*`.
   */
  trainOps?: string;
  /** The policy's tokenizer (default `digits`); read when the policy is created, not on a resume or warm start. */
  tokenizer?: (typeof CALC_TOKENIZERS)[number];
  /**
   * How GRPO trains the policy: `tinker`, the only one, drives it through Tinker's API (`TinkerTrainingBackend` → the
   * tiny server's `/api/v1`: forward_backward with the `ppo` loss, optim_step, save_weights_for_sampler), the path
   * hosted Tinker takes. (`tiny`, the embedded trainer driven directly, was removed.)
   */
  backend?: 'tinker';
  /** Where the store, weights, checkpoints, metrics and the PNG go (default: a fresh temp dir). */
  workDir?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** What a run measured. */
export interface CalcXResult {
  baselineReward: number;
  trainedReward: number;
  steps: number;
  seconds: number;
  cpuSeconds: number;
  warmStartSeconds: number;
  /** SFT steps the warm start took (0 when it was reused or resumed). */
  warmStartSteps: number;
  validations: Array<{ round: number; reward: number }>;
  rounds: GrpoRoundRecord[];
  workDir: string;
  pngPath: string;
}

/** The policy's shape: both token shifts, so a position sees the two tokens before it (copying digits needs them). */
export const DEFAULT_MODEL: Partial<Omit<TinyConfig, 'vocabSize'>> = {
  dModel: 48,
  nLayers: 3,
  nHeads: 4,
  dFF: 192,
  maxSeqLen: 128,
  prevTokenEmbedding: true,
  prev2TokenEmbedding: true,
  segmentPositions: true,
};

/** The default settings (`npm run demo` with no flags): 450-480 s on a quiet 2-core machine (seeds 1-3). */
export const CALC_X_DEFAULTS = {
  seed: 1,
  sftSteps: 400,
  sftStopAt: 0.125,
  sftBatchSize: 16,
  sftLearningRate: 1e-2,
  rounds: 100,
  tasksPerRound: 16,
  groupSize: 8,
  valEvery: 10,
  rlLearningRate: 1e-3,
  stepsPerRound: 1,
  trainTemperature: 0.5,
  clipEps: 0.2,
  negativeCredit: 'first-divergence',
  tokenizer: 'digits',
  trainOps: HALF_PRODUCTS,
  valSize: 64,
  nRunners: 8,
  backend: 'tinker',
} satisfies CalcXOptions;

/** The RL learning rate of round `n` when `rlLearningRateEnd` is set (linear from `rlLearningRate`), else undefined. */
export function linearDecay(o: {
  rlLearningRate: number;
  rlLearningRateEnd?: number;
  rounds: number;
}): ((round: number) => number) | undefined {
  const { rlLearningRate: from, rlLearningRateEnd: to, rounds } = o;
  if (to === undefined) return undefined;
  return (round) => from + (to - from) * Math.min(1, (round - 1) / Math.max(1, rounds - 1));
}

/** Warm start, baseline validation, GRPO rounds with validation, reward-curve PNG: the whole Calc-X pipeline. */
export async function runCalcX(input: CalcXOptions = {}): Promise<CalcXResult> {
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as CalcXOptions;
  const options = { ...CALC_X_DEFAULTS, ...given };
  const seed = options.seed;
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const cpu0 = process.cpuUsage();
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'calc-x-')));
  await mkdir(workDir, { recursive: true });
  const weightsDir = join(workDir, 'weights');
  if ((options.backend as string) !== 'tinker')
    throw new UserError(
      `backend "${String(options.backend)}" is not available: Calc-X trains through Tinker's API only; drop the option or pass backend: 'tinker'.`,
    );
  if (options.stepsPerRound !== 1)
    throw new UserError(
      `stepsPerRound ${options.stepsPerRound}: Tinker's path takes one forward_backward + optim_step a round; use 1.`,
    );
  const server = await startTinyServer({
    weightsDir,
    init: { config: { ...DEFAULT_MODEL, ...options.model }, tokenizer: calcTokenizer(options.tokenizer), seed },
    samplingSeed: seed,
    tinker: true,
  });
  const closers: Array<() => Promise<unknown>> = [() => server.close()];
  try {
    const resumed = existsSync(join(workDir, 'grpo', 'trainer.ckpt'))
      ? await GRPO.readState(join(workDir, 'grpo'))
      : null;
    let warmStartSeconds = 0;
    let warmStartSteps = 0;
    if (resumed) {
      // Resume after a crash: GRPO restores the Tinker state (load_weights, Adam included) and the round from state.json.
      log(`resuming after round ${resumed.round} from ${join(workDir, 'grpo', 'trainer.ckpt')}`);
    } else if (options.warmStartFrom) {
      await copyFile(join(options.warmStartFrom, 'warm.agltiny'), join(weightsDir, 'warm.agltiny'));
      log(`warm start: reusing ${join(options.warmStartFrom, 'warm.agltiny')}`);
    } else {
      const warmStarted = Date.now();
      warmStartSteps = await warmStart({ weightsDir, options, log });
      warmStartSeconds = (Date.now() - warmStarted) / 1000;
    }
    if (!resumed) await server.loadWeights('warm');

    const store = new SqliteStore({ path: join(workDir, 'store.sqlite') });
    closers.unshift(() => store.close());
    const gateway = await startGateway({ store, port: 0 });
    closers.unshift(() => gateway.close());
    const backend = await tinkerBackend({ server, options, closers });
    const algorithm = new GRPO({
      backend,
      rounds: options.rounds,
      tasksPerRound: options.tasksPerRound,
      groupSize: options.groupSize,
      valEvery: options.valEvery,
      seed,
      control: options.control ?? 'none',
      negativeCredit: options.negativeCredit,
      checkpointDir: join(workDir, 'grpo'),
      onValidation: ({ round, reward }) => log(`validation after round ${round}: reward ${reward.toFixed(3)}`),
      onRound: (r) =>
        log(
          `round ${r.round}: train reward ${r.trainReward.toFixed(3)}, ${r.nSamples} samples, ${String(r.metrics?.skippedGroups ?? '-')} groups skipped, ${String(r.metrics?.tokens ?? '-')} tokens, loss ${r.metrics?.loss.toFixed(4) ?? '-'}, ${r.seconds.toFixed(1)} s`,
        ),
    });
    const train = makeTasks({ n: 500, seed: seed * 7919 + 2, split: 'train', ops: options.trainOps });
    const val = makeTasks({ n: options.valSize, seed: seed * 7919 + 3, split: 'val' });
    const fitter = new Trainer({
      algorithm,
      store,
      nRunners: options.nRunners,
      initialResources: tinyResources(server.url, 'warm', options.trainTemperature),
    });
    await fitter.fit(calcAgent({ gatewayUrl: gateway.url }), { train, val });

    const validations = algorithm.validations;
    const pngPath = join(workDir, 'reward-curve.png');
    await writeFile(
      pngPath,
      rewardCurvePng({
        series: [
          { points: algorithm.rounds.map((r) => [r.round, r.trainReward]), color: [230, 120, 30] },
          { points: validations.map((v) => [v.round, v.reward]), color: [30, 90, 220] },
        ],
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    return {
      baselineReward: validations[0]?.reward ?? 0,
      trainedReward: validations.at(-1)?.reward ?? 0,
      steps: algorithm.rounds.length,
      seconds: (Date.now() - started) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      warmStartSeconds,
      warmStartSteps,
      validations,
      rounds: algorithm.rounds,
      workDir,
      pngPath,
    };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
}

/**
 * The warm start: SFT on demonstrations the task generates itself (train operands only), `sftSteps` at most. With
 * `sftStopAt`, greedy exact match on 128 probe tasks (training operands, teacher-forced, no validation task looked at)
 * is checked every 8 steps and, once the probe solves any task, after every step; the warm start stops at the first
 * check that meets `sftStopAt`. Saves weights version `warm`; returns the steps taken.
 */
async function warmStart(a: {
  weightsDir: string;
  options: Pick<typeof CALC_X_DEFAULTS, 'seed' | 'sftSteps' | 'sftBatchSize' | 'sftLearningRate' | 'trainOps'> & {
    sftStopAt: number | null;
  };
  log: (line: string) => void;
}): Promise<number> {
  const { seed, sftSteps, sftStopAt, trainOps } = a.options;
  const sft = await TinyTrainer.create({
    weightsDir: a.weightsDir,
    version: 'v0',
    optimizer: { learningRate: a.options.sftLearningRate },
  });
  try {
    const demos = makeTasks({ n: 2000, seed: seed * 7919 + 1, split: 'train', ops: trainOps }).map(demonstration);
    const probe =
      sftStopAt === null
        ? undefined
        : await sft.sftRows(
            makeTasks({ n: 128, seed: seed * 7919 + 5, split: 'train', ops: trainOps }).map(demonstration),
          );
    let steps = 0;
    let fine = false;
    while (steps < sftSteps) {
      const res = await sft.sft({
        examples: demos,
        steps: Math.min(fine ? 1 : 8, sftSteps - steps),
        batchSize: a.options.sftBatchSize,
        seed: seed + steps,
      });
      steps += res.length;
      const solved = probe ? (await sft.sftAccuracy(probe)).exactMatch : undefined;
      if (!fine || (solved !== undefined && solved >= (sftStopAt ?? 1)) || steps % 8 === 0 || steps >= sftSteps)
        a.log(
          `warm start: ${steps}/${sftSteps} SFT steps, loss ${res.at(-1)?.loss.toFixed(3)}${solved === undefined ? '' : `, probe tasks solved ${solved.toFixed(3)}`}`,
        );
      if (solved !== undefined && sftStopAt !== null && solved >= sftStopAt) break;
      if (solved !== undefined && solved > 0) fine = true;
    }
    await sft.save({ version: 'warm', overwrite: true });
    return steps;
  } finally {
    await sft.close();
  }
}

/** The LLM resource that routes rollouts to a version (or `tinker://` sampler path) of the tiny server. */
function tinyResources(url: string, model: string, temperature: number) {
  return {
    main_llm: {
      resourceType: 'llm' as const,
      endpoint: `${url}/v1`,
      model: `agl-tiny@${model}`,
      samplingParameters: { temperature },
    },
  };
}

/**
 * GRPO through Tinker's API on the embedded policy: a training model on the warm-started weights (`agl-tiny@warm`),
 * the `ppo` loss with the clip range, Adam with gradient clipping and the learning-rate schedule, rollouts sampling
 * each saved sampler path through the tiny server's OpenAI route (`agl-tiny@tinker://…`).
 */
async function tinkerBackend(a: {
  server: { url: string; tinkerUrl: string | undefined };
  options: Pick<typeof CALC_X_DEFAULTS, 'clipEps' | 'rlLearningRate' | 'rounds' | 'trainTemperature'> &
    Pick<CalcXOptions, 'rlLearningRateEnd'>;
  closers: Array<() => Promise<unknown>>;
}): Promise<GrpoBackend> {
  const { server, options } = a;
  const service = new ServiceClient({ baseUrl: server.tinkerUrl!, apiKey: 'tml-calc-x', heartbeatIntervalMs: 60_000 });
  a.closers.unshift(() => service.close());
  const training = await service.createLoraTrainingClient({ baseModel: 'agl-tiny@warm', rank: 32 });
  return new TinkerTrainingBackend({
    training,
    baseUrl: server.tinkerUrl!,
    resourcesFor: (path) => tinyResources(server.url, path, options.trainTemperature),
    loss: 'ppo',
    clipLow: 1 - options.clipEps,
    clipHigh: 1 + options.clipEps,
    learningRate: linearDecay(options) ?? options.rlLearningRate,
    adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
  });
}
