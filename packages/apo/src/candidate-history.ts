import type { LightningStore } from '@agl/core';
import { findFinalReward } from '@agl/core/transitions';

/** A candidate as recorded in the store: its prompt and the mean reward of its rollouts per evaluation key. */
export interface StoredCandidate {
  version: string;
  resourcesId: string;
  template: string | null;
  /** Evaluation key (e.g. `r1/select/v3`) → mean final reward of its finished rollouts (missing reward = 0). */
  scores: Record<string, { score: number; n: number }>;
}

/**
 * Rebuild every candidate of an APO run from the store alone (resources `${runId}-v<n>` plus the rollouts tagged
 * `apo_run`): what the dashboard or `agl rollouts` shows, and what a resumed run reuses.
 */
export async function loadApoCandidates(options: {
  store: LightningStore;
  runId?: string;
  resourceName?: string;
}): Promise<StoredCandidate[]> {
  const runId = options.runId ?? 'apo';
  const out = new Map<string, StoredCandidate>();
  const resources = await options.store.queryResources({ resourcesIdContains: `${runId}-v` });
  for (const r of resources.items) {
    const m = new RegExp(`^${runId.replace(/[.:-]/gu, '\\$&')}-(v\\d+)$`, 'u').exec(r.resourcesId);
    if (!m) continue;
    const named = options.resourceName
      ? r.resources[options.resourceName]
      : Object.values(r.resources).find((x) => x.resourceType === 'prompt_template');
    out.set(m[1] as string, {
      version: m[1] as string,
      resourcesId: r.resourcesId,
      template: named?.resourceType === 'prompt_template' ? named.template : null,
      scores: {},
    });
  }
  const sums = new Map<string, { total: number; n: number }>();
  const rollouts = (await options.store.queryRollouts({ statusIn: ['succeeded', 'failed', 'cancelled'], limit: -1 }))
    .items;
  for (const rollout of rollouts) {
    const meta = rollout.metadata as Record<string, unknown> | null;
    if (meta?.apo_run !== runId || typeof meta.apo_key !== 'string' || typeof meta.apo_version !== 'string') continue;
    const key = `${meta.apo_version}|${meta.apo_key.split('#')[0] ?? ''}`;
    const spans = (await options.store.querySpans({ rolloutId: rollout.rolloutId, attemptId: 'latest' })).items;
    const acc = sums.get(key) ?? { total: 0, n: 0 };
    acc.total += findFinalReward(spans) ?? 0;
    acc.n += 1;
    sums.set(key, acc);
  }
  for (const [key, { total, n }] of sums) {
    const [version, evalKey] = key.split('|') as [string, string];
    const c = out.get(version);
    if (c) c.scores[evalKey] = { score: total / n, n };
  }
  return [...out.values()].sort((a, b) => Number(a.version.slice(1)) - Number(b.version.slice(1)));
}
