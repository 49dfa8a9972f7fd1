import { join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '@agl/core/errors';
import {
  GRPO,
  SAMPLE_ESTIMATORS,
  tinkerGrpo,
  TINKER_RL_LOSSES,
  type SampleEstimator,
  type TinkerRl,
} from '@agl/trainer';
import { numberFlag } from './flag-values';
import type { CliIo } from './output';

/** The `agl train` flags of training through the Tinker API (`--backend tinker`). */
export interface TinkerTrainFlags {
  backend?: string;
  baseModel?: string;
  loraRank?: number;
  groupSize?: number;
  tasksPerRound?: number;
  rounds?: number;
  loss?: string;
  learningRate?: number;
  maxStepsOffPolicy?: number;
  saveEvery?: number;
  tinkerUrl?: string;
  tokenizer?: string;
  agentMatch?: string;
  minReward?: number;
  seed?: number;
  valEvery?: number;
  checkpointDir?: string;
}

/** `--algorithm` names that train weights (sample-based, through `--backend tinker`). */
export const WEIGHT_ALGORITHMS: readonly SampleEstimator[] = SAMPLE_ESTIMATORS;

const TINKER_ONLY: Array<[keyof TinkerTrainFlags, string]> = [
  ['baseModel', '--base-model'],
  ['loraRank', '--lora-rank'],
  ['groupSize', '--group-size'],
  ['tasksPerRound', '--tasks-per-round'],
  ['rounds', '--rounds'],
  ['loss', '--loss'],
  ['learningRate', '--learning-rate'],
  ['maxStepsOffPolicy', '--max-steps-off-policy'],
  ['saveEvery', '--save-every'],
  ['tinkerUrl', '--tinker-url'],
  ['tokenizer', '--tokenizer'],
  ['agentMatch', '--agent-match'],
  ['minReward', '--min-reward'],
  ['seed', '--seed'],
  ['valEvery', '--val-every'],
  ['checkpointDir', '--checkpoint-dir'],
];

/** Adds the `--backend tinker` flags to `agl train`. */
export function withTinkerTrainFlags(command: Command): Command {
  const int = (flag: string, min: number) => numberFlag(flag, { integer: true, min });
  return command
    .option(
      '--backend <name>',
      'train model weights through this API (grpo, rloo, rejection-sampling): tinker = hosted Tinker or a Tinker-compatible server ($TINKER_API_KEY, $TINKER_BASE_URL)',
    )
    .option('--base-model <name>', 'tinker: the base model to train a LoRA on, e.g. Qwen/Qwen3-4B-Instruct-2507')
    .option('--lora-rank <n>', 'tinker: LoRA rank (default 32)', int('lora-rank', 1))
    .option(
      '--group-size <n>',
      'tinker: rollouts per task, the group advantages compare (default 8)',
      int('group-size', 1),
    )
    .option('--tasks-per-round <n>', 'tinker: train tasks per round (default 16)', int('tasks-per-round', 1))
    .option('--rounds <n>', 'tinker: rounds, one optimizer step each (default 10)', int('rounds', 1))
    .option('--loss <name>', `tinker: ${TINKER_RL_LOSSES.join(' | ')} (default importance_sampling)`)
    .option('--learning-rate <x>', 'tinker: Adam learning rate (default 4e-5)', numberFlag('learning-rate', { min: 0 }))
    .option(
      '--max-steps-off-policy <k>',
      'tinker: 0 = synchronous (default); k > 0 = the next round samples while this one trains, and samples more than k optimizer steps behind are dropped',
      int('max-steps-off-policy', 0),
    )
    .option(
      '--save-every <n>',
      'tinker: save_weights every n rounds; a rerun of the same command resumes from the last save (default 1)',
      int('save-every', 1),
    )
    .option('--tinker-url <url>', 'tinker: the Tinker service base URL (default $TINKER_BASE_URL, else hosted Tinker)')
    .option('--tokenizer <dir|package>', "tinker: the base model's tokenizer (default: built in for Qwen3 / Llama 3)")
    .option('--agent-match <regex>', 'tinker: train only the LLM calls of agents whose name matches (multi-agent runs)')
    .option(
      '--min-reward <x>',
      'tinker, rejection-sampling: the lowest reward a kept rollout may have (default 1)',
      numberFlag('min-reward'),
    )
    .option('--seed <n>', 'tinker: seeds the task sampling (default 0)', int('seed', 0))
    .option(
      '--val-every <n>',
      'tinker: run the val tasks every n rounds too (default: only before the first round and after the last)',
      int('val-every', 0),
    )
    .option(
      '--checkpoint-dir <dir>',
      'tinker: round records and the resume state (default .agl/train/<algorithm>-<base model>)',
    );
}

/** Where a `--backend tinker` run keeps its round records and resume state unless `--checkpoint-dir` says. */
export function defaultCheckpointDir(algorithm: string, baseModel: string): string {
  return join('.agl', 'train', `${algorithm}-${baseModel.replace(/[^A-Za-z0-9._-]+/gu, '_')}`);
}

/**
 * Checks the weight-training flags together and builds the algorithm: `null` when none of them is in play (the
 * entry's algorithm, baseline or APO runs). Throws a UserError naming the flag and the fix.
 */
export function resolveTinkerAlgorithm(
  algorithm: string | undefined,
  flags: TinkerTrainFlags,
  io: CliIo,
  quiet: boolean,
): { algorithm: TinkerRl; checkpointDir: string } | null {
  const weights = algorithm !== undefined && (WEIGHT_ALGORITHMS as readonly string[]).includes(algorithm);
  if (flags.backend === undefined) {
    if (weights)
      throw new UserError(
        `--algorithm ${algorithm} trains model weights: add --backend tinker --base-model NAME (hosted Tinker with $TINKER_API_KEY, or a Tinker-compatible server with --tinker-url).`,
      );
    const stray = TINKER_ONLY.find(([key]) => flags[key] !== undefined);
    if (stray)
      throw new UserError(`${stray[1]} goes with --backend tinker (and --algorithm grpo, rloo or rejection-sampling).`);
    return null;
  }
  if (flags.backend !== 'tinker')
    throw new UserError(
      `--backend ${flags.backend} is not a weight-training backend; use --backend tinker (hosted Tinker, or a Tinker-compatible server with --tinker-url).`,
    );
  if (!weights)
    throw new UserError(
      `--backend tinker trains weights with --algorithm grpo, rloo or rejection-sampling; got ${algorithm === undefined ? 'no --algorithm' : `--algorithm ${algorithm}`}.`,
    );
  if (!flags.baseModel)
    throw new UserError(
      '--backend tinker needs --base-model NAME, the model to train a LoRA on (e.g. Qwen/Qwen3-4B-Instruct-2507).',
    );
  if (flags.loss !== undefined && !(TINKER_RL_LOSSES as readonly string[]).includes(flags.loss))
    throw new UserError(
      `--loss ${flags.loss} is not a Tinker policy-gradient loss; use --loss importance_sampling (default) or --loss ppo.`,
    );
  if (flags.learningRate !== undefined && flags.learningRate <= 0)
    throw new UserError(`--learning-rate must be > 0 (e.g. 4e-5); got ${flags.learningRate}.`);
  if (flags.minReward !== undefined && algorithm !== 'rejection-sampling')
    throw new UserError('--min-reward goes with --algorithm rejection-sampling.');
  let agentMatch: RegExp | undefined;
  if (flags.agentMatch !== undefined) {
    try {
      agentMatch = new RegExp(flags.agentMatch);
    } catch (error) {
      throw new UserError(
        `--agent-match ${JSON.stringify(flags.agentMatch)} is not a valid regular expression (${(error as Error).message}); pass e.g. --agent-match '^solver$'.`,
      );
    }
  }
  const name = algorithm as SampleEstimator;
  const checkpointDir = flags.checkpointDir ?? defaultCheckpointDir(name, flags.baseModel);
  const rounds = flags.rounds ?? 10;
  const built = tinkerGrpo({
    algorithm: name,
    baseModel: flags.baseModel,
    loraRank: flags.loraRank ?? 32,
    groupSize: flags.groupSize ?? 8,
    tasksPerRound: flags.tasksPerRound ?? 16,
    rounds,
    loss: (flags.loss ?? 'importance_sampling') as (typeof TINKER_RL_LOSSES)[number],
    ...(flags.learningRate !== undefined ? { learningRate: flags.learningRate } : {}),
    maxStepsOffPolicy: flags.maxStepsOffPolicy ?? 0,
    saveEvery: flags.saveEvery ?? 1,
    ...(flags.tinkerUrl !== undefined ? { tinkerUrl: flags.tinkerUrl } : {}),
    ...(flags.tokenizer !== undefined ? { tokenizer: flags.tokenizer } : {}),
    ...(agentMatch ? { agentMatch } : {}),
    ...(flags.minReward !== undefined ? { minReward: flags.minReward } : {}),
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    valEvery: flags.valEvery ?? 0,
    checkpointDir,
    log: (line) => {
      if (!quiet) io.err(line);
    },
    onValidation: (v) => {
      if (!quiet && v.round === 0) io.err(`${name}: val reward ${v.reward.toFixed(3)} before training`);
    },
    onRound: (r) => {
      if (quiet) return;
      const m = (r.metrics ?? {}) as Record<string, unknown>;
      const num = (key: string) => (typeof m[key] === 'number' ? (m[key] as number) : 0);
      io.err(
        `${name}: round ${r.round}/${rounds} mean reward ${r.trainReward.toFixed(3)}, skipped groups ${num('skippedGroups')}, ` +
          `loss ${num('loss').toFixed(4)}, tokens ${num('tokens')}, ${r.seconds.toFixed(1)} s` +
          `${r.lag ? `, lag ${r.lag}` : ''}${r.droppedStale ? `, dropped ${r.droppedStale} stale` : ''}` +
          `${r.valReward !== undefined ? `, val reward ${r.valReward.toFixed(3)}` : ''}, resources ${r.resourcesId}`,
      );
    },
  });
  return { algorithm: built, checkpointDir };
}

/** Before the run: say whether it resumes (and from which round), or that it already finished. */
export async function announceTinkerResume(
  run: { algorithm: TinkerRl; checkpointDir: string },
  rounds: number,
  io: CliIo,
): Promise<void> {
  const state = await GRPO.readState(run.checkpointDir);
  if (!state) return;
  if (state.round >= rounds)
    io.err(
      `${run.algorithm.name}: the run in ${run.checkpointDir} already finished ${state.round} rounds; nothing to do. Pass --rounds N (more rounds), or --checkpoint-dir DIR (or delete ${run.checkpointDir}) to start over.`,
    );
  else
    io.err(
      `${run.algorithm.name}: resuming at round ${state.round + 1}/${rounds} from ${run.checkpointDir} (load_weights of the last saved state)`,
    );
}

/** After the run: the summary lines (or the JSON fields) of a `--backend tinker` run. */
export function tinkerRunReport(run: { algorithm: TinkerRl; checkpointDir: string }): {
  lines: string[];
  json: Record<string, unknown>;
} {
  const s = run.algorithm.summary();
  const fmt = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
  return {
    lines: [
      `${s.algorithm} through Tinker on ${s.baseModel}: ${s.rounds} rounds this run, ${s.rollouts} rollouts, ${s.tokens} trained tokens, ` +
        `${s.skippedGroups} skipped groups${s.droppedStale ? `, ${s.droppedStale} stale samples dropped` : ''}, ${s.seconds.toFixed(1)} s`,
      `mean train reward ${fmt(s.firstReward)} (first round) → ${fmt(s.lastReward)} (last round)`,
      ...(s.validations.length > 0
        ? [
            `val reward ${s.validations.map((v) => `${v.reward.toFixed(3)} (${v.round === 0 ? 'before' : `round ${v.round}`})`).join(' → ')}`,
          ]
        : []),
      ...(s.samplerPath
        ? [
            `sampler_path=${s.samplerPath}`,
            `serve it: agl gateway serve --tinker --sampler ${s.samplerPath}  (rounds: ${run.checkpointDir}/metrics.jsonl)`,
          ]
        : []),
    ],
    json: { ...s, checkpointDir: run.checkpointDir, roundRecords: run.algorithm.rounds },
  };
}
