import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { buildTrainingSamples, type TrainingSampleBatch } from '@agl/core/algorithms';
import type { Trajectory } from '@agl/core';
import { addAglTraceProcessor } from '@agl/openai-agents';
import { SqliteStore } from '@agl/store/sqlite';
import { Baseline, Trainer } from '@agl/trainer';
import { exportVerl, loadTrajectories, type ExportVerlResult } from '@agl/trainer/export';
import { newsroomRollout } from './newsroom-agents';
import { HEADLINE_TASKS, type HeadlineTask } from './newsroom-tasks';

/** Options of {@link runNewsroom}. */
export interface RunNewsroomOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  /** Where `store.sqlite` and `verl/` go. */
  workDir: string;
  /** Rollouts per task (a GRPO group; default 3). */
  groupSize?: number;
  nRunners?: number;
  returnTokenIds?: boolean;
  /** The agent whose calls are trained (default `writer`). */
  agentMatch?: string | RegExp;
  tasks?: readonly HeadlineTask[];
}

/** What {@link runNewsroom} returns. */
export interface NewsroomResult {
  meanReward: number;
  /** LLM calls per agent over every rollout (read from the store, no filter). */
  callsByAgent: Record<string, number>;
  /** Every rollout's trajectory without a filter (both agents) and with `agentMatch` (the trained agent only). */
  allTrajectories: Trajectory[];
  trainedTrajectories: Trajectory[];
  /** GRPO training samples of the trained agent, one per call (`level: 'transition'`). */
  batch: TrainingSampleBatch;
  /** The same samples written for verl (`agl export verl --agent-match writer`). */
  verl: ExportVerlResult;
  storePath: string;
}

/**
 * Run the newsroom `groupSize` times per task (`Baseline` with one epoch per group member, so each task's rollouts
 * form a GRPO group), then build the training data of the trained agent only: `loadTrajectories` with `agentMatch`
 * keeps the writer's calls, GRPO advantages are computed over them, and the verl rows are exported.
 */
export async function runNewsroom(o: RunNewsroomOptions): Promise<NewsroomResult> {
  addAglTraceProcessor();
  const workDir = resolve(o.workDir);
  await mkdir(workDir, { recursive: true });
  const storePath = join(workDir, 'store.sqlite');
  const agentMatch = o.agentMatch ?? 'writer';
  await new Trainer({
    store: storePath,
    nRunners: o.nRunners ?? 1,
    algorithm: new Baseline({ nEpochs: o.groupSize ?? 3 }),
    initialResources: { llm: { resourceType: 'llm', endpoint: o.baseURL, model: o.model, apiKey: o.apiKey ?? null } },
  }).fit(newsroomRollout({ returnTokenIds: o.returnTokenIds }) as never, { train: [...(o.tasks ?? HEADLINE_TASKS)] });

  const store = new SqliteStore({ path: storePath });
  try {
    const all = (await loadTrajectories({ store })).trajectories;
    const trained = (await loadTrajectories({ store, filter: { agentMatch } })).trajectories;
    const callsByAgent: Record<string, number> = {};
    for (const t of all.flatMap((x) => x.transitions)) {
      const name = t.agentName ?? '(none)';
      callsByAgent[name] = (callsByAgent[name] ?? 0) + 1;
    }
    const batch = buildTrainingSamples({ trajectories: trained, level: 'transition' });
    const verl = await exportVerl({
      store,
      outDir: join(workDir, 'verl'),
      filter: { agentMatch },
      level: 'transition',
      formats: ['jsonl'],
    });
    const rewards = all.map((t) => t.finalReward ?? 0);
    return {
      meanReward: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
      callsByAgent,
      allTrajectories: all,
      trainedTrajectories: trained,
      batch,
      verl,
      storePath,
    };
  } finally {
    await store.close();
  }
}
