import type { LightningStore, NamedResourcesInput, Rollout, RolloutMode } from '@agl/core';
import { findFinalReward, taskIdOf, TraceToMessages } from '@agl/core/transitions';
import { RolloutBatch, taskRequest, type RolloutRequest } from '@agl/trainer';
import { candidateResourcesId, type Candidate } from './candidate';
import type { Experiment } from './prompt-files';

/** Outcome of evaluating one candidate on one batch. */
export interface Evaluation {
  version: string;
  key: string;
  /** Mean final reward over finished rollouts, a missing reward counting 0 (AGL 0.3). */
  score: number;
  experiments: Experiment[];
  /** Reward per task id (0 when missing). */
  perTask: Map<string, number>;
}

/** Options of {@link Evaluator}. */
export interface EvaluatorOptions {
  store: LightningStore;
  runId: string;
  /** The resource key of the prompt template. */
  resourceName: string;
  /** The other initial resources (e.g. the agent's LLM), published with every candidate. */
  baseResources: NamedResourcesInput;
  timeoutSeconds: number;
  signal: AbortSignal;
  now?: () => number;
}

/**
 * Publishes candidates as resources versions and scores them by enqueuing rollouts. Every rollout carries
 * `metadata.apo_run` / `apo_key` / `apo_version`; rollouts already in the store under the same key are reused, so a
 * rerun after a crash replays finished work instead of redoing it.
 */
export class Evaluator {
  readonly #o: EvaluatorOptions;
  readonly #existing = new Map<string, Rollout>();
  readonly #published = new Set<string>();
  readonly #adapter = new TraceToMessages();
  /** Rollouts reused from an earlier run of the same `runId`. */
  reused = 0;

  constructor(options: EvaluatorOptions) {
    this.#o = options;
  }

  /** Index the rollouts of earlier runs with this run id. */
  async init(): Promise<void> {
    const all = await this.#o.store.queryRollouts({ limit: -1 });
    for (const r of all.items) {
      const m = r.metadata as Record<string, unknown> | null;
      if (m?.apo_run === this.#o.runId && typeof m.apo_key === 'string') this.#existing.set(m.apo_key, r);
    }
  }

  /** The stored template of a candidate version, if an earlier run published it. */
  async storedTemplate(version: string): Promise<string | null> {
    const found = await this.#o.store.getResourcesById(candidateResourcesId(this.#o.runId, version));
    const resource = found?.resources[this.#o.resourceName];
    return resource?.resourceType === 'prompt_template' ? resource.template : null;
  }

  /** Publish a candidate as a resources version (once). */
  async publish(candidate: Candidate): Promise<void> {
    const id = candidateResourcesId(this.#o.runId, candidate.version);
    if (this.#published.has(id)) return;
    this.#published.add(id);
    if ((await this.#o.store.getResourcesById(id)) !== null) return;
    await this.#o.store.updateResources(id, {
      ...this.#o.baseResources,
      [this.#o.resourceName]: { resourceType: 'prompt_template', template: candidate.template, engine: 'f-string' },
    });
  }

  /** Run `tasks` with `candidate` and score them. */
  async evaluate(candidate: Candidate, tasks: readonly unknown[], mode: RolloutMode, key: string): Promise<Evaluation> {
    await this.publish(candidate);
    const { store, runId } = this.#o;
    const resourcesId = candidateResourcesId(runId, candidate.version);
    const batch = new RolloutBatch({ store, signal: this.#o.signal });
    const ids: string[] = [];
    const toEnqueue: { index: number; request: RolloutRequest }[] = [];
    tasks.forEach((task, i) => {
      const apoKey = `${key}#${i}`;
      const found = this.#existing.get(apoKey);
      if (found) {
        this.reused += 1;
        ids[i] = found.rolloutId;
        return;
      }
      const metadata = {
        apo_run: runId,
        apo_key: apoKey,
        apo_version: candidate.version,
        apo_phase: key.split('/')[1] ?? key,
      };
      toEnqueue.push({ index: i, request: taskRequest(task, { mode, resourcesId, metadata }) });
    });
    batch.track(ids.filter((id) => id !== undefined));
    const created = await batch.enqueue(toEnqueue.map((e) => e.request));
    created.forEach((r, j) => {
      ids[toEnqueue[j]!.index] = r.rolloutId;
      this.#existing.set((r.metadata as { apo_key: string }).apo_key, r);
    });
    const finished = await batch.drain({ timeoutSeconds: this.#o.timeoutSeconds, now: this.#o.now });
    const experiments: Experiment[] = [];
    const perTask = new Map<string, number>();
    for (const id of ids) {
      const rollout = finished.get(id);
      if (!rollout) continue;
      const spans = await batch.spansOf(id);
      const reward = findFinalReward(spans);
      let messages: Experiment['messages'] = [];
      try {
        messages = this.#adapter.adapt(spans);
      } catch {
        messages = [];
      }
      const taskId = taskIdOf(rollout);
      experiments.push({ rolloutId: id, taskId, status: rollout.status, finalReward: reward, messages });
      perTask.set(taskId, reward ?? 0);
    }
    const total = experiments.reduce((sum, e) => sum + (e.finalReward ?? 0), 0);
    return { version: candidate.version, key, score: total / Math.max(1, experiments.length), experiments, perTask };
  }
}
