import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { findRewardSpans, getRewardsFromSpan, TraceToTransitions } from '@agl/core/transitions';
import { addAglTraceProcessor } from '@agl/openai-agents';
import { SqliteStore } from '@agl/store/sqlite';
import { Trainer } from '@agl/trainer';
import { RAG_QUESTIONS, type RagTask } from './corpus-search';
import { ragRollout } from './rag-agent';

/** Options of {@link runRag}. */
export interface RunRagOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  /** Where `store.sqlite` goes. */
  workDir: string;
  topK?: number;
  returnTokenIds?: boolean;
  nRunners?: number;
  questions?: readonly RagTask[];
}

/** One question's outcome, read back from the store. */
export interface RagOutcome {
  taskId: string;
  rolloutId: string;
  answer: string;
  f1: number;
  exactMatch: number;
  llmCalls: number;
}

/** What {@link runRag} returns. */
export interface RunRagResult {
  outcomes: RagOutcome[];
  meanF1: number;
  meanExactMatch: number;
  storePath: string;
}

/**
 * Run the RAG agent once over the questions (`Trainer.dev`, no learning) with the embedded SQLite store
 * `<workDir>/store.sqlite`, then read every rollout back from the store: its LLM calls, final answer and reward.
 */
export async function runRag(o: RunRagOptions): Promise<RunRagResult> {
  addAglTraceProcessor();
  const workDir = resolve(o.workDir);
  await mkdir(workDir, { recursive: true });
  const storePath = join(workDir, 'store.sqlite');
  const questions = o.questions ?? RAG_QUESTIONS;
  await new Trainer({
    store: storePath,
    nRunners: o.nRunners ?? 4,
    initialResources: { llm: { resourceType: 'llm', endpoint: o.baseURL, model: o.model, apiKey: o.apiKey ?? null } },
  }).dev(ragRollout({ topK: o.topK, returnTokenIds: o.returnTokenIds }) as never, { dataset: [...questions] });

  const store = new SqliteStore({ path: storePath });
  try {
    const adapter = new TraceToTransitions();
    const outcomes: RagOutcome[] = [];
    for (const rollout of (await store.queryRollouts({ sortBy: 'startTime', sortOrder: 'asc' })).items) {
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId, attemptId: 'latest' })).items;
      const dims = new Map(findRewardSpans(spans).flatMap((s) => getRewardsFromSpan(s).map((d) => [d.name, d.value])));
      const transitions = adapter.transitions(spans);
      const last = transitions.at(-1)?.action.message.content;
      outcomes.push({
        taskId: (rollout.input as unknown as RagTask).id,
        rolloutId: rollout.rolloutId,
        answer: typeof last === 'string' ? last : '',
        f1: dims.get('f1') ?? 0,
        exactMatch: dims.get('exact_match') ?? 0,
        llmCalls: transitions.length,
      });
    }
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return {
      outcomes,
      meanF1: mean(outcomes.map((x) => x.f1)),
      meanExactMatch: mean(outcomes.map((x) => x.exactMatch)),
      storePath,
    };
  } finally {
    await store.close();
  }
}
