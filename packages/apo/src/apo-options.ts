import { UserError } from '@agl/core/errors';
import type { ChatClient, ChatClientOptions } from './chat-client';
import { CRITIQUE_PROMPTS, EDIT_PROMPTS } from './prompt-files';

/** What APO reports while it runs. */
export type ApoEvent =
  | { type: 'seed'; version: string; score: number | null }
  | { type: 'candidate'; version: string; parent: string | null; round: number; origin: 'edit' | 'merge' }
  | { type: 'edit-failed'; parent: string; round: number; reason: string }
  | {
      type: 'selection';
      round: number;
      kept: { version: string; score: number }[];
      rejected: { version: string; score: number }[];
    }
  | { type: 'round'; round: number; leader: string; leaderScore: number; bestVersion: string; bestScore: number }
  | { type: 'budget-exhausted'; message: string }
  /** The rollouts of a round (0: the seed's validation) hold no LLM span: the critique sees no conversation. */
  | { type: 'untraced'; round: number; rollouts: number; message: string }
  | { type: 'done'; bestVersion: string; bestScore: number };

/** Options of {@link APO} (defaults as AGL 0.3). */
export interface ApoOptions {
  /** A ready client, or the options to build one (`OPENAI_BASE_URL` / `OPENAI_API_KEY` when neither is given). */
  client?: ChatClient;
  llm?: ChatClientOptions;
  /** `beam` (AGL 0.3 APO, default) or `reflective` (GEPA-style: per-task reflections, Pareto set, merges). */
  apoStrategy?: 'beam' | 'reflective';
  /** Critique model (default `gpt-5-mini`). */
  gradientModel?: string;
  /** Edit model (default `gpt-4.1-mini`). */
  applyEditModel?: string;
  /** Temperature of both models (default 1.0). */
  diversityTemperature?: number;
  gradientBatchSize?: number;
  valBatchSize?: number;
  beamWidth?: number;
  branchFactor?: number;
  beamRounds?: number;
  /** Seconds to wait for one batch of rollouts (default 3600); unfinished rollouts are left out of the score. */
  rolloutBatchTimeoutSeconds?: number;
  /** Score the seed on the full val set first (default true). */
  runInitialValidation?: boolean;
  /** Critique template ids (built-ins) or `.md` paths; one is picked at random per expansion. */
  gradientPromptFiles?: string[];
  applyEditPromptFiles?: string[];
  /** Seed of every random choice (default 0). */
  seed?: number;
  /** Prefix of the candidates' resources ids and key of the rollouts' `apo_run` metadata (default `apo`). Reuse it to resume. */
  runId?: string;
  /** Write the best prompt here (`.txt`) plus `<path>.json` with scores and lineage. */
  outputPath?: string;
  /** Reflective only: merge two complementary Pareto candidates every this many rounds (default 1; 0 disables). */
  mergeEvery?: number;
  onEvent?: (event: ApoEvent) => void;
}

/** Options with defaults filled in. */
export type ResolvedApoOptions = Required<Omit<ApoOptions, 'client' | 'llm' | 'outputPath' | 'onEvent'>> &
  Pick<ApoOptions, 'outputPath' | 'onEvent'>;

const POSITIVE_INTS = ['gradientBatchSize', 'valBatchSize', 'beamWidth', 'branchFactor', 'beamRounds'] as const;

/** Fill defaults and validate. */
export function resolveApoOptions(options: ApoOptions): ResolvedApoOptions {
  const r: ResolvedApoOptions = {
    apoStrategy: options.apoStrategy ?? 'beam',
    gradientModel: options.gradientModel ?? 'gpt-5-mini',
    applyEditModel: options.applyEditModel ?? 'gpt-4.1-mini',
    diversityTemperature: options.diversityTemperature ?? 1.0,
    gradientBatchSize: options.gradientBatchSize ?? 4,
    valBatchSize: options.valBatchSize ?? 16,
    beamWidth: options.beamWidth ?? 4,
    branchFactor: options.branchFactor ?? 4,
    beamRounds: options.beamRounds ?? 3,
    rolloutBatchTimeoutSeconds: options.rolloutBatchTimeoutSeconds ?? 3600,
    runInitialValidation: options.runInitialValidation ?? true,
    gradientPromptFiles: options.gradientPromptFiles ?? [...CRITIQUE_PROMPTS],
    applyEditPromptFiles: options.applyEditPromptFiles ?? [...EDIT_PROMPTS],
    seed: options.seed ?? 0,
    runId: options.runId ?? 'apo',
    mergeEvery: options.mergeEvery ?? 1,
    outputPath: options.outputPath,
    onEvent: options.onEvent,
  };
  for (const key of POSITIVE_INTS) {
    const v = r[key];
    if (!Number.isInteger(v) || v < 1)
      throw new UserError(`APO ${key} must be an integer ≥ 1; got ${String(options[key])}.`);
  }
  if (r.apoStrategy !== 'beam' && r.apoStrategy !== 'reflective')
    throw new UserError(`APO apoStrategy must be 'beam' or 'reflective'; got ${String(options.apoStrategy)}.`);
  if (r.gradientPromptFiles.length === 0 || r.applyEditPromptFiles.length === 0)
    throw new UserError('APO gradientPromptFiles and applyEditPromptFiles must each name at least one template.');
  if (!/^[A-Za-z0-9_.:-]+$/u.test(r.runId))
    throw new UserError(`APO runId may hold letters, digits and _ . : - only; got ${JSON.stringify(r.runId)}.`);
  return r;
}
