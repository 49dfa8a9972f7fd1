import { getRewardValue } from './reward-readers';
import { walkTree, type TraceNode } from './trace-tree';

/** How rewards are matched to LLM calls (AGL 0.3 `RewardMatchPolicy`). */
export type RewardMatchPolicy = 'first_occurrence' | 'first_sibling';

interface Pending {
  id: string;
  end: number | null;
}

function assign(
  pending: Pending[],
  rewardStart: number | null,
  value: number,
  assigned: Map<string, number | null>,
): void {
  for (let i = pending.length - 1; i >= 0; i -= 1) {
    const call = pending[i] as Pending;
    if (assigned.get(call.id) !== null) continue;
    if (call.end === null || rewardStart === null || call.end > rewardStart) continue;
    assigned.set(call.id, value);
    return;
  }
}

/**
 * Matches rewards to the LLM calls they follow (AGL 0.3 `match_rewards`, reference §5.5). Each reward goes to the
 * latest call that ended at or before the reward started and has no reward yet; each call gets at most one reward.
 * `first_occurrence` looks at all spans by start time; `first_sibling` only at siblings. Returns call id → reward.
 */
export function matchRewards(
  root: TraceNode,
  llmCallIds: ReadonlySet<string>,
  options: { policy?: RewardMatchPolicy; ignoreRewardSpans?: ReadonlySet<string> } = {},
): Map<string, number | null> {
  const assigned = new Map<string, number | null>();
  for (const id of llmCallIds) assigned.set(id, null);
  const rewardOf = (node: TraceNode): number | null =>
    node.virtual || options.ignoreRewardSpans?.has(node.id) ? null : getRewardValue(node.span);
  const scan = (nodes: TraceNode[]): void => {
    const pending: Pending[] = [];
    for (const node of nodes) {
      if (llmCallIds.has(node.id)) pending.push({ id: node.id, end: node.span.endTime });
      const reward = rewardOf(node);
      if (reward !== null) assign(pending, node.span.startTime, reward, assigned);
    }
  };
  if ((options.policy ?? 'first_occurrence') === 'first_occurrence') {
    const all = [...walkTree(root)];
    const order = new Map(all.map((n, i) => [n, i]));
    all.sort((a, b) => {
      const sa = a.span.startTime ?? Infinity;
      const sb = b.span.startTime ?? Infinity;
      return sa !== sb ? sa - sb : (order.get(a) as number) - (order.get(b) as number);
    });
    scan(all);
  } else {
    for (const node of walkTree(root)) scan(node.children);
  }
  return assigned;
}
