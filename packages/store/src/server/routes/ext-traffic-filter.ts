import { z } from 'zod';
import { isRecord } from '@agl/core/guards';
import type { Rollout, RolloutMode } from '@agl/core/schema';
import { fieldError } from '../http-errors';
import type { RolloutSummary } from './ext-rollout-summaries';

/** Query fields that narrow the dashboard's rollout list and traffic chart (all optional, all must match). */
export const TRAFFIC_FILTER_FIELDS = {
  /** `production`: only the production sources (`production`, `unscoped`); `all`: every rollout. */
  scope: z.enum(['production', 'all']).optional(),
  /** `metadata.source` equals this (`production`, `unscoped`, ...). */
  source: z.string().min(1).max(200).optional(),
  /** `metadata.agent_name` equals this. */
  agent: z.string().min(1).max(200).optional(),
  /** Rollouts with at least one feedback, or with none. */
  feedback: z.enum(['with', 'without']).optional(),
  /** Final reward at least / at most this (rollouts without a reward are left out when either is given). */
  min_reward: z.union([z.number(), z.string()]).optional(),
  max_reward: z.union([z.number(), z.string()]).optional(),
  /** Started at or after / before this: epoch seconds or an ISO date. */
  since: z.union([z.number(), z.string()]).optional(),
  until: z.union([z.number(), z.string()]).optional(),
};

/** Sources counted as production traffic: recorded requests and LLM calls outside any request (Contract 1b). */
export const PRODUCTION_SOURCES: readonly string[] = ['production', 'unscoped'];

/** The parsed filter. */
export interface TrafficFilter {
  /** `production` keeps only {@link PRODUCTION_SOURCES}; null or `all`: no such narrowing. */
  scope: 'production' | 'all' | null;
  source: string | null;
  agent: string | null;
  feedback: 'with' | 'without' | null;
  minReward: number | null;
  maxReward: number | null;
  since: number | null;
  until: number | null;
}

function numberField(value: number | string | undefined, field: string): number | null {
  if (value === undefined || value === '') return null;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw fieldError(field, `${field} must be a number (got ${JSON.stringify(value)})`, 400);
  return n;
}

/** Epoch seconds of a `since`/`until` value: a number of seconds, or an ISO date such as `2026-12-01T00:00Z`. */
export function timeField(value: number | string | undefined, field: string): number | null {
  if (value === undefined || value === '') return null;
  if (typeof value === 'number' || /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw fieldError(field, `${field} must be epoch seconds or an ISO date (got ${JSON.stringify(value)})`, 400);
  return ms / 1000;
}

/** {@link TrafficFilter} of a parsed query holding {@link TRAFFIC_FILTER_FIELDS}. */
export function trafficFilter(q: {
  scope?: 'production' | 'all';
  source?: string;
  agent?: string;
  feedback?: 'with' | 'without';
  min_reward?: number | string;
  max_reward?: number | string;
  since?: number | string;
  until?: number | string;
}): TrafficFilter {
  return {
    scope: q.scope ?? null,
    source: q.source ?? null,
    agent: q.agent ?? null,
    feedback: q.feedback ?? null,
    minReward: numberField(q.min_reward, 'min_reward'),
    maxReward: numberField(q.max_reward, 'max_reward'),
    since: timeField(q.since, 'since'),
    until: timeField(q.until, 'until'),
  };
}

/** True when the filter narrows anything. */
export function isFiltering(f: TrafficFilter): boolean {
  return Object.entries(f).some(([k, v]) => v !== null && !(k === 'scope' && v === 'all'));
}

function metadataString(rollout: Rollout, key: string): string | null {
  const value = isRecord(rollout.metadata) ? rollout.metadata[key] : undefined;
  return typeof value === 'string' ? value : null;
}

/** The rollout's `metadata.source`, or `null`. */
export const sourceOf = (rollout: Rollout): string | null => metadataString(rollout, 'source');
/** The rollout's `metadata.agent_name`, or `null`. */
export const agentOf = (rollout: Rollout): string | null => metadataString(rollout, 'agent_name');

/** The filter on what the rollout row alone holds (time window, source, agent): checked before any summary is read. */
export function matchesRollout(f: TrafficFilter, rollout: Rollout): boolean {
  if (f.since !== null && rollout.startTime < f.since) return false;
  if (f.until !== null && rollout.startTime >= f.until) return false;
  if (f.scope === 'production' && !PRODUCTION_SOURCES.includes(sourceOf(rollout) ?? '')) return false;
  if (f.source !== null && sourceOf(rollout) !== f.source) return false;
  if (f.agent !== null && agentOf(rollout) !== f.agent) return false;
  return true;
}

/** The filter on a summary's reward and feedback. */
export function matchesSummary(f: TrafficFilter, s: RolloutSummary): boolean {
  if (f.feedback === 'with' && s.feedback.length === 0) return false;
  if (f.feedback === 'without' && s.feedback.length > 0) return false;
  if (f.minReward !== null && (s.finalReward === null || s.finalReward < f.minReward)) return false;
  if (f.maxReward !== null && (s.finalReward === null || s.finalReward > f.maxReward)) return false;
  return true;
}

/** `mode` / `mode_in` of the dashboard routes: a store mode, or `none` for rollouts without one (live traffic). */
export const MODE_FILTER = z.enum(['train', 'val', 'test', 'none']);

/** What the store filters of a `mode_in` list (`null`: it cannot, `none` is asked for), and the full check. */
export interface ModeSelection {
  /** For `queryRollouts`: the named modes, or `null` when every mode must be read. */
  modeIn: Array<NonNullable<RolloutMode>> | null;
  /** True when the rollouts the store answers still need {@link ModeSelection.matches}. */
  narrowed: boolean;
  matches(mode: RolloutMode): boolean;
}

/** The {@link ModeSelection} of a parsed `mode_in` (absent: every mode). */
export function modeSelection(modes: ReadonlyArray<z.infer<typeof MODE_FILTER>> | undefined): ModeSelection {
  if (modes === undefined || modes.length === 0) return { modeIn: null, narrowed: false, matches: () => true };
  const named = modes.filter((m): m is NonNullable<RolloutMode> => m !== 'none');
  const wantsNone = named.length < modes.length;
  return {
    modeIn: wantsNone ? null : named,
    narrowed: wantsNone,
    matches: (mode) => (mode === null ? wantsNone : named.includes(mode)),
  };
}
