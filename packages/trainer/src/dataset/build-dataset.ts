import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { agentNameOf, canonicalJson, findFinalReward, listFeedback, sha256Hex } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import { isRecord } from '@agl/core/guards';
import { RELEASE_METADATA, type JsonObject, type Rollout, type RolloutStatus, type Span } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { latestSpans, recordedRollouts } from './recorded-rollouts';
import {
  redactionSummary,
  trainingDataRedaction,
  type RedactionSummary,
  type RedactOption,
} from '../export/training-data-redaction';

/** Options of {@link buildDataset}. Every filter is optional; they all apply together. */
export interface BuildDatasetOptions {
  /**
   * Keep rollouts whose source is one of these (`production`, `unscoped`, ...). A rollout's source is
   * `metadata.source`; a rollout without it (a training run) counts as the source of its mode (`train`, `val`, `test`),
   * or `unknown` when it has no mode either. Absent or containing `any`: every source.
   */
  sources?: readonly string[];
  /** Keep rollouts started at or after this time (epoch seconds). */
  since?: number;
  /** Keep rollouts started before this time (epoch seconds). */
  until?: number;
  /** Keep rollouts of these agents: `metadata.agent_name`, else the first agent name found on the rollout's spans. */
  agents?: readonly string[];
  /** Keep rollouts whose final reward is at least this (rollouts without a reward are dropped). */
  minReward?: number;
  /** Keep rollouts whose final reward is at most this (rollouts without a reward are dropped). */
  maxReward?: number;
  /** `with`: only rollouts with user feedback; `without`: only rollouts without. */
  feedback?: 'with' | 'without';
  /** Keep each input once (the earliest rollout that passes the other filters). */
  dedupe?: boolean;
  /** At most this many tasks: the newest that pass the filters. */
  limit?: number;
  /** Share of tasks (0..1) that go to the validation set, chosen by a hash of the input (stable under re-runs). */
  valFraction?: number;
  /** Rollout statuses to read (default `succeeded`, `failed`: finished rollouts). */
  statuses?: readonly RolloutStatus[];
  /**
   * Mask secrets in every line (input, feedback comments); default on, `false` = `--no-redact`. The split and
   * `dedupe` use the stored input, so they do not move when redaction changes.
   */
  redact?: RedactOption;
  /** Keep the requests of this release (`metadata.release_id`, recorded by `observe` while a release runs). */
  release?: string;
  /** With `release`: keep one arm's requests (`metadata.release_arm`: `baseline` or `candidate`). */
  arm?: 'baseline' | 'candidate';
}

/** The `_agl` key of a dataset line (CONTRACTS.md item E). */
export interface DatasetLineMeta {
  rollout_id: string;
  reward: number | null;
  feedback: { reward: number; comment?: string; dimensions: Record<string, number>; time: number | null }[];
  source: string;
  resources_id: string | null;
}

/** One task line: the rollout's input (an object spread, anything else under `input`) plus `_agl`. */
export interface DatasetLine {
  [key: string]: unknown;
  _agl: DatasetLineMeta;
}

/** What {@link buildDataset} returns. */
export interface BuiltDataset {
  train: DatasetLine[];
  val: DatasetLine[];
  /** Rollouts read: those of the statuses and the time window. */
  scanned: number;
  /** What redaction masked. */
  redaction: RedactionSummary;
}

const ANY = 'any';

/** A rollout's source: `metadata.source`, else its mode, else `unknown`. */
export function rolloutSource(rollout: Pick<Rollout, 'metadata' | 'mode'>): string {
  const source = rollout.metadata?.source;
  if (typeof source === 'string' && source !== '') return source;
  return rollout.mode ?? 'unknown';
}

/** Where an input falls in [0, 1): the first 32 bits of SHA-256 of its canonical JSON. */
export function inputHashFraction(input: unknown): number {
  return Number.parseInt(sha256Hex(canonicalJson(input)).slice(0, 8), 16) / 2 ** 32;
}

function agentOf(rollout: Rollout, spans: readonly Span[]): string | null {
  const named = rollout.metadata?.agent_name;
  if (typeof named === 'string' && named !== '') return named;
  for (const span of spans) {
    const name = agentNameOf(span);
    if (name !== null) return name;
  }
  return null;
}

function check(options: BuildDatasetOptions): void {
  const f = options.valFraction;
  if (f !== undefined && !(Number.isFinite(f) && f >= 0 && f < 1))
    throw new UserError(`valFraction must be a number in [0, 1); got ${String(f)}. Use e.g. 0.1 for a 10% split.`);
  const l = options.limit;
  if (l !== undefined && !(Number.isInteger(l) && l >= 1))
    throw new UserError(`limit must be an integer ≥ 1; got ${String(l)}.`);
  if (options.feedback !== undefined && options.feedback !== 'with' && options.feedback !== 'without')
    throw new UserError(`feedback must be 'with' or 'without'; got ${JSON.stringify(options.feedback)}.`);
  if (options.arm !== undefined && options.release === undefined)
    throw new UserError(`arm (${options.arm}) selects within a release; pass the release id too (--release <id>).`);
}

/** The task line of one rollout. */
export function datasetLine(rollout: Rollout, spans: readonly Span[]): DatasetLine {
  const base: JsonObject = isRecord(rollout.input) ? { ...(rollout.input as JsonObject) } : { input: rollout.input };
  const meta: DatasetLineMeta = {
    rollout_id: rollout.rolloutId,
    reward: findFinalReward(spans),
    feedback: listFeedback(spans).map(({ reward, comment, dimensions, time }) => ({
      reward,
      ...(comment !== undefined ? { comment } : {}),
      dimensions,
      time,
    })),
    source: rolloutSource(rollout),
    resources_id: rollout.resourcesId ?? null,
  };
  return { ...base, _agl: meta };
}

/**
 * Turns stored rollouts into a task set (issue 38): each rollout that passes the filters becomes one task line (its
 * input plus `_agl` with rollout id, final reward, feedback, source and resources id), oldest first. Reads the latest
 * attempt's spans of each rollout. With `valFraction`, a task goes to `val` when the hash of its input falls below the
 * fraction, so re-runs and added rollouts never move a task between the sets.
 */
export async function buildDataset(store: LightningStore, options: BuildDatasetOptions = {}): Promise<BuiltDataset> {
  check(options);
  const redaction = trainingDataRedaction(options.redact);
  const rollouts = await recordedRollouts(store, {
    statuses: options.statuses ?? ['succeeded', 'failed'],
    since: options.since,
    until: options.until,
  });
  const sources = options.sources?.includes(ANY) ? undefined : options.sources;
  const seen = new Set<string>();
  const kept: { line: DatasetLine; input: unknown }[] = [];
  for (const rollout of rollouts) {
    if (sources && !sources.includes(rolloutSource(rollout))) continue;
    if (options.release !== undefined && rollout.metadata?.[RELEASE_METADATA.releaseId] !== options.release) continue;
    if (options.arm !== undefined && rollout.metadata?.[RELEASE_METADATA.arm] !== options.arm) continue;
    const key = options.dedupe ? canonicalJson(rollout.input) : '';
    if (options.dedupe && seen.has(key)) continue;
    const spans = await latestSpans(store, rollout.rolloutId);
    if (options.agents) {
      const agent = agentOf(rollout, spans);
      if (agent === null || !options.agents.includes(agent)) continue;
    }
    const line = datasetLine(rollout, spans);
    const { reward, feedback } = line._agl;
    if (options.minReward !== undefined && (reward === null || reward < options.minReward)) continue;
    if (options.maxReward !== undefined && (reward === null || reward > options.maxReward)) continue;
    if (options.feedback === 'with' && feedback.length === 0) continue;
    if (options.feedback === 'without' && feedback.length > 0) continue;
    if (options.dedupe) seen.add(key);
    kept.push({ line, input: rollout.input });
  }
  const lines = options.limit !== undefined ? kept.slice(-options.limit) : kept;
  const fraction = options.valFraction ?? 0;
  const train: DatasetLine[] = [];
  const val: DatasetLine[] = [];
  for (const { line, input } of lines) {
    (fraction > 0 && inputHashFraction(input) < fraction ? val : train).push(redaction ? redaction.json(line) : line);
  }
  return { train, val, scanned: rollouts.length, redaction: redactionSummary(redaction) };
}

/** `tasks.jsonl` -> `tasks.val.jsonl` (any other name gets `.val.jsonl` appended). */
export function valPathOf(out: string): string {
  return /\.jsonl$/u.test(out) ? out.replace(/\.jsonl$/u, '.val.jsonl') : `${out}.val.jsonl`;
}

/**
 * Writes `built.train` to `out` and, when `withVal`, `built.val` next to it ({@link valPathOf}); one JSON task a line.
 * Returns the paths written.
 */
export async function writeDatasetFiles(
  out: string,
  built: BuiltDataset,
  withVal: boolean,
): Promise<{ out: string; valOut: string | null }> {
  const jsonl = (lines: DatasetLine[]): string => lines.map((l) => `${JSON.stringify(l)}\n`).join('');
  const full = resolve(out);
  await mkdir(dirname(full), { recursive: true });
  await writeFile(full, jsonl(built.train), 'utf8');
  if (!withVal) return { out: full, valOut: null };
  const valOut = valPathOf(full);
  await writeFile(valOut, jsonl(built.val), 'utf8');
  return { out: full, valOut };
}
