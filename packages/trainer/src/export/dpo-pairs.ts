import { resolveFinalReward } from '@agl/core/algorithms';
import type { Trajectory } from '@agl/core/schema';
import { sameMessages, toOpenAiMessage, type OpenAiMessage, type OpenAiTool } from './openai-messages';

/** One line of an OpenAI preference (DPO) fine-tuning file. */
export interface DpoRecord {
  input: { messages: OpenAiMessage[]; tools?: OpenAiTool[] };
  preferred_output: OpenAiMessage[];
  non_preferred_output: OpenAiMessage[];
}

/** Options of {@link toDpoPairs}. */
export interface DpoPairsOptions {
  trajectories: readonly Trajectory[];
  /** The best reward must exceed the worst by more than this. Default 0 (any strict difference). */
  minRewardGap?: number;
  /** Tools offered to the call at `index` of `trajectory`, if known. */
  toolsOf?: (trajectory: Trajectory, index: number) => OpenAiTool[] | null | undefined;
}

/** Counters of a DPO build. */
export interface DpoStats {
  /** Tasks seen (trajectories grouped by task id). */
  nTasks: number;
  nPairs: number;
  /** Tasks with fewer than two rewarded trajectories. */
  nTooFewRewarded: number;
  /** Tasks whose best and worst rewards are within `minRewardGap`. */
  nNoRewardGap: number;
  /** Tasks whose best and worst trajectories saw different prompts before their responses diverged. */
  nNoSharedPrompt: number;
  /** Tasks whose best and worst trajectories gave identical responses throughout. */
  nIdentical: number;
}

interface Rewarded {
  trajectory: Trajectory;
  reward: number;
}

/** Where two trajectories first answer the same prompt differently. */
function divergence(best: Trajectory, worst: Trajectory): { index: number } | 'no-shared-prompt' | 'identical' {
  const n = Math.min(best.transitions.length, worst.transitions.length);
  for (let i = 0; i < n; i++) {
    const b = best.transitions[i]!;
    const w = worst.transitions[i]!;
    if (!sameMessages(b.state.messages.map(toOpenAiMessage), w.state.messages.map(toOpenAiMessage))) {
      return 'no-shared-prompt';
    }
    if (!sameMessages([toOpenAiMessage(b.action.message)], [toOpenAiMessage(w.action.message)])) return { index: i };
  }
  return 'identical';
}

/**
 * DPO pairs from the best and the worst trajectory of each task: at the first call where both saw the same prompt
 * but answered differently, the best one's answer is preferred and the worst one's is not.
 */
export function toDpoPairs(options: DpoPairsOptions): { records: DpoRecord[]; stats: DpoStats } {
  const { trajectories, minRewardGap = 0 } = options;
  const groups = new Map<string, Rewarded[]>();
  const tasks = new Set<string>();
  for (const trajectory of trajectories) {
    tasks.add(trajectory.taskId);
    const reward = resolveFinalReward(trajectory);
    if (reward === null) continue;
    const list = groups.get(trajectory.taskId);
    if (list) list.push({ trajectory, reward });
    else groups.set(trajectory.taskId, [{ trajectory, reward }]);
  }
  const stats: DpoStats = {
    nTasks: tasks.size,
    nPairs: 0,
    nTooFewRewarded: 0,
    nNoRewardGap: 0,
    nNoSharedPrompt: 0,
    nIdentical: 0,
  };
  stats.nTooFewRewarded = [...tasks].filter((t) => (groups.get(t)?.length ?? 0) < 2).length;
  const records: DpoRecord[] = [];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    let best = members[0]!;
    let worst = members[0]!;
    for (const m of members) {
      if (m.reward > best.reward) best = m;
      if (m.reward < worst.reward) worst = m;
    }
    if (!(best.reward - worst.reward > minRewardGap)) {
      stats.nNoRewardGap += 1;
      continue;
    }
    const found = divergence(best.trajectory, worst.trajectory);
    if (found === 'no-shared-prompt') stats.nNoSharedPrompt += 1;
    else if (found === 'identical') stats.nIdentical += 1;
    else {
      const b = best.trajectory.transitions[found.index]!;
      const w = worst.trajectory.transitions[found.index]!;
      const tools = options.toolsOf?.(best.trajectory, found.index);
      records.push({
        input: { messages: b.state.messages.map(toOpenAiMessage), ...(tools && tools.length > 0 ? { tools } : {}) },
        preferred_output: [toOpenAiMessage(b.action.message)],
        non_preferred_output: [toOpenAiMessage(w.action.message)],
      });
      stats.nPairs += 1;
    }
  }
  return { records, stats };
}
