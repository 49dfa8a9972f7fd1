import { resolveFinalReward } from '@agl/core/algorithms';
import type { Trajectory } from '@agl/core/schema';
import { isMessagePrefix, toOpenAiMessage, type OpenAiMessage, type OpenAiTool } from './openai-messages';

/** One line of an OpenAI chat fine-tuning file. */
export interface SftRecord {
  messages: OpenAiMessage[];
  tools?: OpenAiTool[];
}

/** Options of {@link toSftRecords}. */
export interface SftRecordsOptions {
  trajectories: readonly Trajectory[];
  /** Keep only trajectories whose final reward is ≥ this (trajectories without a reward are then dropped). */
  minReward?: number;
  /** Keep only the best-rewarded trajectory of each task (the first on ties). */
  bestPerTask?: boolean;
  /** Tools offered to the call at `index` of `trajectory` (from the span's `gen_ai.request.functions`), if known. */
  toolsOf?: (trajectory: Trajectory, index: number) => OpenAiTool[] | null | undefined;
}

/** Counters of an SFT build. */
export interface SftStats {
  nTrajectories: number;
  /** Trajectories left out by `minReward` or `bestPerTask`. */
  nFilteredOut: number;
  nRecords: number;
}

function selectTrajectories(options: SftRecordsOptions): Trajectory[] {
  const { trajectories, minReward, bestPerTask = false } = options;
  let kept = trajectories.filter((t) => {
    if (minReward === undefined) return true;
    const reward = resolveFinalReward(t);
    return reward !== null && reward >= minReward;
  });
  if (bestPerTask) {
    const best = new Map<string, { trajectory: Trajectory; reward: number }>();
    for (const t of kept) {
      const reward = resolveFinalReward(t) ?? Number.NEGATIVE_INFINITY;
      const current = best.get(t.taskId);
      if (!current || reward > current.reward) best.set(t.taskId, { trajectory: t, reward });
    }
    const chosen = new Set([...best.values()].map((b) => b.trajectory));
    kept = kept.filter((t) => chosen.has(t));
  }
  return kept;
}

/**
 * Trajectories → OpenAI chat fine-tuning records. Each call becomes the conversation it saw plus its response; a
 * conversation that the next call of the same trajectory continues is folded into it (OpenAI trains every assistant
 * message of a record, so a multi-turn loop yields one record, not one per turn).
 */
export function toSftRecords(options: SftRecordsOptions): { records: SftRecord[]; stats: SftStats } {
  const kept = selectTrajectories(options);
  const records: SftRecord[] = [];
  for (const trajectory of kept) {
    const own: SftRecord[] = [];
    trajectory.transitions.forEach((transition, index) => {
      const messages = [...transition.state.messages, transition.action.message].map(toOpenAiMessage);
      const tools = options.toolsOf?.(trajectory, index);
      const record: SftRecord = { messages, ...(tools && tools.length > 0 ? { tools } : {}) };
      const previous = own[own.length - 1];
      if (previous && isMessagePrefix(previous.messages, messages)) own[own.length - 1] = record;
      else own.push(record);
    });
    records.push(...own);
  }
  return {
    records,
    stats: {
      nTrajectories: options.trajectories.length,
      nFilteredOut: options.trajectories.length - kept.length,
      nRecords: records.length,
    },
  };
}
