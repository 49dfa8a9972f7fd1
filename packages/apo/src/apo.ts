import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { NamedResourcesInput } from '@agl/core';
import { UserError } from '@agl/core/errors';
import type { Algorithm, AlgorithmRunOptions } from '@agl/trainer';
import { resolveApoOptions, type ApoOptions, type ResolvedApoOptions } from './apo-options';
import { beamSearch } from './beam-search';
import { candidateResourcesId, type Candidate, type CandidateReport } from './candidate';
import { ChatClient, type ChatUsage } from './chat-client';
import { Evaluator } from './evaluator';
import { reflectiveSearch } from './reflective-search';
import { SearchState, type RejectedChild } from './search-state';
import { SeededRandom } from './seeded-random';
import { TextualGradient } from './textual-gradient';

/** What one APO run found. */
export interface ApoResult {
  strategy: 'beam' | 'reflective';
  bestVersion: string;
  bestPrompt: string;
  /** Full-val score of the best prompt. */
  bestScore: number;
  /** Full-val score of the seed (null without initial validation). */
  seedScore: number | null;
  /** The candidate's resources id that holds the best prompt (`${runId}-v<n>`). */
  bestResourcesId: string;
  /**
   * The resources id the best prompt is published under as the latest version, `${runId}-best`: what services and
   * later runs read.
   */
  publishedResourcesId: string;
  roundsCompleted: number;
  candidates: CandidateReport[];
  rejectedWorseChildren: RejectedChild[];
  /** Rollouts reused from an earlier run with the same `runId`. */
  reusedRollouts: number;
  budgetExhausted: boolean;
  usage: ChatUsage;
}

/**
 * Automatic Prompt Optimisation (AGL 0.3 `APO`) as an {@link Algorithm}: beam search with textual gradients, or a
 * GEPA-style reflective search (`apoStrategy: 'reflective'`). The first `prompt_template` of the initial resources is
 * the seed; every candidate becomes a resources version `${runId}-v<n>` that its rollouts reference.
 */
export class APO implements Algorithm {
  readonly name = 'apo';
  readonly #options: ResolvedApoOptions;
  readonly #client: ChatClient;
  #result: ApoResult | null = null;

  constructor(options: ApoOptions = {}) {
    this.#options = resolveApoOptions(options);
    this.#client = options.client ?? new ChatClient(options.llm ?? clientFromEnv());
  }

  /** The result of the last `run` (null before). */
  get result(): ApoResult | null {
    return this.#result;
  }

  /** The best prompt so far (AGL 0.3 `get_best_prompt`). */
  getBestPrompt(): string | null {
    return this.#result?.bestPrompt ?? null;
  }

  async run({ store, train, val, initialResources, signal }: AlgorithmRunOptions): Promise<void> {
    const o = this.#options;
    if (train.length === 0 || val.length === 0)
      throw new UserError(
        `APO needs both a train and a val dataset; got ${train.length} train and ${val.length} val tasks.`,
      );
    const { resourceName, template, base } = seedOf(initialResources);
    const evaluator = new Evaluator({
      store,
      runId: o.runId,
      resourceName,
      baseResources: base,
      timeoutSeconds: o.rolloutBatchTimeoutSeconds,
      signal,
    });
    await evaluator.init();
    const storedSeed = await evaluator.storedTemplate('v0');
    if (storedSeed !== null && storedSeed !== template) {
      throw new UserError(
        `APO runId ${JSON.stringify(o.runId)} already exists in this store with a different seed prompt (${JSON.stringify(storedSeed.slice(0, 60))}…). ` +
          'Pass a new runId to start a fresh search, or the same seed prompt to resume.',
      );
    }
    const seed: Candidate = { version: 'v0', template, parent: null, round: 0, origin: 'seed' };
    const gradient = new TextualGradient({
      client: this.#client,
      gradientModel: o.gradientModel,
      applyEditModel: o.applyEditModel,
      temperature: o.diversityTemperature,
      gradientBatchSize: o.gradientBatchSize,
    });
    const state = new SearchState({
      options: o,
      evaluator,
      gradient,
      random: new SeededRandom(o.seed),
      train,
      val,
      signal,
      seed,
    });
    await evaluator.publish(seed);
    await (o.apoStrategy === 'reflective' ? reflectiveSearch(state) : beamSearch(state));

    const bestResourcesId = candidateResourcesId(o.runId, state.best.version);
    const publishedResourcesId = `${o.runId}-best`;
    await store.updateResources(publishedResourcesId, {
      ...base,
      [resourceName]: { resourceType: 'prompt_template', template: state.best.template, engine: 'f-string' },
    });
    this.#result = {
      strategy: o.apoStrategy,
      bestVersion: state.best.version,
      bestPrompt: state.best.template,
      bestScore: state.bestScore,
      seedScore: state.seedScore,
      bestResourcesId,
      publishedResourcesId,
      roundsCompleted: state.roundsCompleted,
      candidates: [...state.candidates.values()].map((c) => ({
        ...c,
        resourcesId: candidateResourcesId(o.runId, c.version),
        scores: state.scores.get(c.version) ?? [],
      })),
      rejectedWorseChildren: state.rejectedWorseChildren,
      reusedRollouts: evaluator.reused,
      budgetExhausted: state.budgetExhausted,
      usage: this.#client.usage,
    };
    if (o.outputPath) await saveResult(o.outputPath, this.#result);
    o.onEvent?.({ type: 'done', bestVersion: state.best.version, bestScore: state.bestScore });
  }
}

function seedOf(resources: NamedResourcesInput | undefined): {
  resourceName: string;
  template: string;
  base: NamedResourcesInput;
} {
  for (const [name, r] of Object.entries(resources ?? {})) {
    if (r.resourceType === 'prompt_template') {
      const base = { ...resources };
      delete base[name];
      return { resourceName: name, template: r.template, base };
    }
  }
  throw new UserError(
    `APO needs a prompt_template among the initial resources; got [${Object.keys(resources ?? {}).join(', ')}]. ` +
      "Pass initialResources: { system_prompt: { resourceType: 'prompt_template', template: '…' } }.",
  );
}

function clientFromEnv(): { baseURL: string; apiKey?: string } {
  const baseURL = process.env.OPENAI_BASE_URL ?? (process.env.OPENAI_API_KEY ? 'https://api.openai.com/v1' : undefined);
  if (!baseURL)
    throw new UserError(
      'APO needs an LLM for critiques and edits: pass { client } or { llm: { baseURL, apiKey } }, or set OPENAI_BASE_URL / OPENAI_API_KEY.',
    );
  return { baseURL, apiKey: process.env.OPENAI_API_KEY };
}

/** Write the best prompt to `path` and the full result to `${path}.json`. */
export async function saveResult(path: string, result: ApoResult): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${result.bestPrompt}\n`, 'utf8');
  await writeFile(`${path}.json`, `${JSON.stringify(result, null, 2)}\n`, 'utf8');
}
