import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NegativeCredit } from '@agl/core/algorithms';
import { startGateway } from '@agl/gateway';
import { SqliteStore } from '@agl/store/sqlite';
import {
  GRPO,
  startTinyServer,
  TinyGrpoBackend,
  TinyTrainer,
  type GrpoRoundRecord,
  type TinyConfig,
} from '@agl/tiny-llm';
import { TinkerTrainingBackend, Trainer, type GrpoBackend } from '@agl/trainer';
import { calcAgent } from './calc-agent';
import { calcTokenizer, demonstration, EVEN_OPS, makeTasks, type CALC_TOKENIZERS } from './calc-tasks';
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
  klCoef?: number;
  /** Policy updates (minibatch passes) per round. */
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
   * How GRPO trains the policy: `tiny` (default) drives the embedded trainer directly (`TinyGrpoBackend`); `tinker`
   * drives the same policy through Tinker's API (`TinkerTrainingBackend` → the tiny server's `/api/v1`:
   * forward_backward with the `ppo` loss, optim_step, save_weights_for_sampler), the path hosted Tinker takes.
   */
  backend?: 'tiny' | 'tinker';
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
};

/** The default settings (`npm run demo` with no flags): under 4 minutes on a quiet 2-core machine. */
export const CALC_X_DEFAULTS = {
  seed: 1,
  sftSteps: 400,
  sftStopAt: 0.1,
  sftBatchSize: 16,
  sftLearningRate: 1e-2,
  rounds: 40,
  tasksPerRound: 16,
  groupSize: 8,
  valEvery: 10,
  rlLearningRate: 1e-3,
  stepsPerRound: 1,
  trainTemperature: 0.5,
  clipEps: 0.2,
  klCoef: 0,
  negativeCredit: 'first-divergence',
  tokenizer: 'digits',
  trainOps: EVEN_OPS,
  valSize: 64,
  nRunners: 8,
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
  const server = await startTinyServer({
    weightsDir,
    init: { config: { ...DEFAULT_MODEL, ...options.model }, tokenizer: calcTokenizer(options.tokenizer), seed },
    samplingSeed: seed,
    tinker: options.backend === 'tinker',
  });
  const closers: Array<() => Promise<unknown>> = [() => server.close()];
  try {
    const ckpt = join(workDir, 'grpo', 'trainer.ckpt');
    const resumed = existsSync(ckpt) ? await GRPO.readState(join(workDir, 'grpo')) : null;
    const viaTinker = options.backend === 'tinker';
    let trainer: TinyTrainer | undefined;
    let warmStartSeconds = 0;
    let warmStartSteps = 0;
    const grpoVersions = (await server.versions()).filter((v) => v.startsWith('grpo-'));
    if (resumed) {
      // Resume after a crash: weights + Adam state from the checkpoint, the round and resources from state.json.
      log(`resuming after round ${resumed.round} from ${ckpt}`);
      if (!viaTinker)
        trainer = await TinyTrainer.create({
          weightsDir,
          checkpoint: ckpt,
          reference: { version: 'warm' },
          optimizer: { learningRate: options.rlLearningRate },
        });
      const last = grpoVersions.at(-1);
      if (last) await server.loadWeights(last);
    } else {
      if (options.warmStartFrom) {
        await copyFile(join(options.warmStartFrom, 'warm.agltiny'), join(weightsDir, 'warm.agltiny'));
        log(`warm start: reusing ${join(options.warmStartFrom, 'warm.agltiny')}`);
      } else {
        // Warm start: SFT on demonstrations the task generates itself (train operands only), a fixed budget or up to
        // the first check that meets `sftStopAt`.
        const { sftSteps, sftStopAt } = options;
        const sft = await TinyTrainer.create({
          weightsDir,
          version: 'v0',
          optimizer: { learningRate: options.sftLearningRate },
        });
        const demos = makeTasks({ n: 2000, seed: seed * 7919 + 1, split: 'train', ops: options.trainOps }).map(
          demonstration,
        );
        const probe =
          sftStopAt === null
            ? undefined
            : await sft.sftRows(
                makeTasks({ n: 128, seed: seed * 7919 + 5, split: 'train', ops: options.trainOps }).map(demonstration),
              );
        const warmStarted = Date.now();
        const batch = 8;
        while (warmStartSteps < sftSteps) {
          const res = await sft.sft({
            examples: demos,
            steps: Math.min(batch, sftSteps - warmStartSteps),
            batchSize: options.sftBatchSize,
            seed: seed + warmStartSteps,
          });
          warmStartSteps += res.length;
          const solved = probe ? (await sft.sftAccuracy(probe)).exactMatch : undefined;
          log(
            `warm start: ${warmStartSteps}/${sftSteps} SFT steps, loss ${res.at(-1)?.loss.toFixed(3)}${solved === undefined ? '' : `, probe tasks solved ${solved.toFixed(3)}`}`,
          );
          if (solved !== undefined && sftStopAt !== null && solved >= sftStopAt) break;
        }
        await sft.save({ version: 'warm', overwrite: true });
        await sft.close();
        warmStartSeconds = (Date.now() - warmStarted) / 1000;
      }
      await server.loadWeights('warm');
      if (!viaTinker)
        trainer = await TinyTrainer.create({
          weightsDir,
          version: 'warm',
          reference: 'initial',
          optimizer: { learningRate: options.rlLearningRate },
        });
    }
    if (trainer) closers.unshift(() => trainer.close());

    const store = new SqliteStore({ path: join(workDir, 'store.sqlite') });
    closers.unshift(() => store.close());
    const gateway = await startGateway({ store, port: 0 });
    closers.unshift(() => gateway.close());

    const backend =
      viaTinker || !trainer
        ? await tinkerBackend({ server, options, closers })
        : new TinyGrpoBackend({
            trainer,
            server,
            firstVersion: grpoVersions.length + 1,
            servedVersion: resumed ? (grpoVersions.at(-1) ?? 'warm') : undefined,
            clipEps: options.clipEps,
            klCoef: options.klCoef,
            stepsPerTrain: options.stepsPerRound,
            learningRate: linearDecay(options),
            samplingParameters: { temperature: options.trainTemperature },
          });
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
          `round ${r.round}: train reward ${r.trainReward.toFixed(3)}, ${r.nSamples} samples, loss ${r.metrics?.loss.toFixed(4) ?? '-'}, clip ${r.metrics?.clipFraction?.toFixed(3) ?? '-'}, ${r.seconds.toFixed(1)} s`,
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
 * the tiny trainer's settings as Adam parameters (so both backends take the same step), rollouts sampling each saved
 * sampler path through the tiny server's OpenAI route (`agl-tiny@tinker://…`).
 */
async function tinkerBackend(a: {
  server: { url: string; tinkerUrl: string | undefined };
  options: Pick<
    typeof CALC_X_DEFAULTS,
    'klCoef' | 'stepsPerRound' | 'clipEps' | 'rlLearningRate' | 'rounds' | 'trainTemperature'
  > &
    Pick<CalcXOptions, 'rlLearningRateEnd'>;
  closers: Array<() => Promise<unknown>>;
}): Promise<GrpoBackend> {
  const { server, options } = a;
  if (options.klCoef > 0 || options.stepsPerRound !== 1)
    throw new Error(
      '--backend tinker takes --kl-coef 0 and --steps-per-round 1 (Tinker has no reference-KL loss term).',
    );
  const { ServiceClient } = await import('@agl/tinker'); // loaded only here: the default path never pays for it
  const service = new ServiceClient({ baseUrl: server.tinkerUrl!, apiKey: 'tml-calc-x', heartbeatIntervalMs: 60_000 });
  a.closers.unshift(() => service.close());
  const training = await service.createLoraTrainingClient({ baseModel: 'agl-tiny@warm', rank: 32 });
  const schedule = linearDecay(options);
  return new TinkerTrainingBackend({
    training,
    baseUrl: server.tinkerUrl!,
    resourcesFor: (path) => tinyResources(server.url, path, options.trainTemperature),
    loss: 'ppo',
    clipLow: 1 - options.clipEps,
    clipHigh: 1 + options.clipEps,
    learningRate: schedule ?? options.rlLearningRate,
    adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
  });
}
