import type { LightningStore } from '@agl/core';
import { AglError } from '@agl/core/errors';
import { Trainer, type AgentLike, type DatasetSource } from '@agl/trainer';
import { APO, type ApoResult } from './apo';
import type { ApoEvent, ApoOptions } from './apo-options';

/** Where {@link optimizePrompt} finds its models and writes its rollouts. */
export interface OptimizePromptSetup {
  /** OpenAI-compatible base URL with `/v1`: the agent, critique and edit models all live there. */
  baseURL: string;
  apiKey?: string;
  /** The agent's model, given to it as the `llm` resource. */
  agentModel: string;
  /** Critique model. */
  gradientModel: string;
  /** Edit model. */
  applyEditModel: string;
  /** A store, a store URL or a SQLite path (default as `Trainer`: `.agl/store.sqlite`). */
  store?: LightningStore | string;
  /** Runner workers (default 4). */
  nRunners?: number;
  /** APO options on top of these (search size, seed, `outputPath`, ...). */
  apo?: Partial<ApoOptions>;
  onEvent?: (event: ApoEvent) => void;
}

/** Options of {@link optimizePrompt}. */
export interface OptimizePromptOptions<T> extends OptimizePromptSetup {
  /** Reads the candidate prompt from `resources.system_prompt` and its model from `resources.llm`. */
  agent: AgentLike<T>;
  train: DatasetSource;
  val: DatasetSource;
  /** The prompt APO starts from. */
  seedPrompt: string;
}

/**
 * Optimise an agent's system prompt with {@link APO} in one call: a `Trainer` runs the agent with the `llm` and
 * `system_prompt` resources (the seed first, then every candidate) and APO's result is returned.
 */
export async function optimizePrompt<T>(o: OptimizePromptOptions<T>): Promise<ApoResult> {
  const apo = new APO({
    llm: { baseURL: o.baseURL, apiKey: o.apiKey, maxConcurrency: 4 },
    gradientModel: o.gradientModel,
    applyEditModel: o.applyEditModel,
    onEvent: o.onEvent,
    ...o.apo,
  });
  await new Trainer({
    algorithm: apo,
    store: o.store,
    nRunners: o.nRunners ?? 4,
    initialResources: {
      llm: { resourceType: 'llm', endpoint: o.baseURL, model: o.agentModel, apiKey: o.apiKey ?? null },
      system_prompt: { resourceType: 'prompt_template', template: o.seedPrompt },
    },
  }).fit(o.agent as AgentLike, { train: o.train, val: o.val });
  if (!apo.result)
    throw new AglError('APO finished without a result: the run stopped before APO scored the seed prompt.');
  return apo.result;
}
