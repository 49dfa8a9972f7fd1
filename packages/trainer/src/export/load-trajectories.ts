import { normalizeLlmCall, TraceToTransitions, type AgentMatch, type ToolDefinition } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import type { RolloutMode, RolloutStatus, Span, Trajectory } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { isFineTuningJobRecord } from '../finetune/job-record';
import type { TrainingDataRedaction } from './training-data-redaction';

/** Which rollouts an export reads. Every given filter must match (AND). */
export interface TrajectoryFilter {
  /** Rollout modes to keep, e.g. `['train']`. Default: every mode. */
  modeIn?: Array<NonNullable<RolloutMode>>;
  /** Resources ids (policy / prompt versions) the rollouts ran with; `'latest'` stands for the latest resources. */
  resourcesIdIn?: string[];
  /** Only calls made inside a matching agent (`agent.name`): a RegExp is searched, a string must equal the name. */
  agentMatch?: AgentMatch | null;
  /** Rollout statuses to keep. Default `['succeeded', 'failed']` (AGL trains on failed rollouts too). */
  statusIn?: RolloutStatus[];
  /** Only these rollouts (e.g. the best ones a rejection-sampling round picked). */
  rolloutIdIn?: string[];
  /** Only rollouts started at or after this time (seconds since the epoch). */
  startedAfter?: number;
}

/** Trajectories read from a store, with the tools each call was offered. */
export interface LoadedTrajectories {
  trajectories: Trajectory[];
  /** Tools the request of call `index` offered (`gen_ai.request.functions`), or `null`. */
  toolsOf(trajectory: Trajectory, index: number): ToolDefinition[] | null;
  /** Rollouts that matched the filter (some may have produced empty trajectories). */
  nRollouts: number;
  /** The resources ids actually filtered on (`latest` resolved). */
  resourcesIdIn: string[] | null;
}

async function resolveResources(store: LightningStore, ids: string[] | undefined): Promise<string[] | null> {
  if (!ids || ids.length === 0) return null;
  const out: string[] = [];
  for (const id of ids) {
    if (id !== 'latest') {
      out.push(id);
      continue;
    }
    const latest = await store.getLatestResources();
    if (!latest) throw new UserError('resources id "latest" was asked for, but the store holds no resources yet');
    out.push(latest.resourcesId);
  }
  return out;
}

/**
 * Reads the latest attempt of every matching rollout from any `LightningStore` (embedded SQLite, memory, or a
 * `StoreClient`) and turns its spans into a `Trajectory` with `TraceToTransitions` (task id from
 * `metadata.task_id`, else the input's stable hash). Rollouts are read in start order.
 */
export async function loadTrajectories(options: {
  store: LightningStore;
  filter?: TrajectoryFilter;
  /** Masks secrets in every span before it becomes a transition (token ids of a call holding one are left out). */
  redaction?: TrainingDataRedaction | null;
}): Promise<LoadedTrajectories> {
  const { store, filter = {}, redaction = null } = options;
  const resourcesIdIn = await resolveResources(store, filter.resourcesIdIn);
  const page = await store.queryRollouts({
    statusIn: filter.statusIn ?? ['succeeded', 'failed'],
    ...(filter.modeIn && filter.modeIn.length > 0 ? { modeIn: filter.modeIn } : {}),
    ...(filter.rolloutIdIn ? { rolloutIdIn: filter.rolloutIdIn } : {}),
    sortBy: 'startTime',
    sortOrder: 'asc',
  });
  const rollouts = page.items.filter(
    (r) =>
      (resourcesIdIn === null || (r.resourcesId !== null && resourcesIdIn.includes(r.resourcesId))) &&
      (filter.startedAfter === undefined || r.startTime >= filter.startedAfter) &&
      !isFineTuningJobRecord(r),
  );
  const adapter = new TraceToTransitions({ agentMatch: filter.agentMatch ?? null });
  const tools = new Map<Trajectory, Array<ToolDefinition[] | null>>();
  const trajectories: Trajectory[] = [];
  for (const rollout of rollouts) {
    const stored = (await store.querySpans({ rolloutId: rollout.rolloutId, attemptId: 'latest' })).items;
    if (stored.length === 0) continue;
    const spans = redaction ? redaction.spans(stored) : stored;
    const trajectory = adapter.adapt(spans, {
      rolloutId: rollout.rolloutId,
      input: rollout.input,
      mode: rollout.mode,
      metadata: rollout.metadata,
    });
    const byId = new Map<string, Span>(spans.map((s) => [s.spanId, s]));
    tools.set(
      trajectory,
      trajectory.transitions.map((t) => {
        const span = t.spanIds[0] === undefined ? undefined : byId.get(t.spanIds[0]);
        return span ? (normalizeLlmCall(span.attributes)?.tools ?? null) : null;
      }),
    );
    trajectories.push(trajectory);
  }
  return {
    trajectories,
    toolsOf: (trajectory, index) => tools.get(trajectory)?.[index] ?? null,
    nRollouts: rollouts.length,
    resourcesIdIn,
  };
}
