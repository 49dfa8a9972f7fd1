import type { NamedResources } from '@agl/core';
import { emitReward } from '@agl/core/tracer';
import type { AgentContext, RolloutFn } from '@agl/trainer';
import { Agent, OpenAIChatCompletionsModel, run, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { answerF1, exactMatch } from './answer-metrics';
import { CorpusSearch, formatHits, type RagTask } from './corpus-search';

/** The agent's instructions. */
export const RAG_INSTRUCTIONS =
  'You answer questions about the Velmora archipelago. Always call the search tool first, then answer with only the ' +
  'answer phrase (a name, a number or a short phrase), not a sentence.';

/** Options of {@link buildRagAgent}. */
export interface RagAgentOptions {
  /** OpenAI-compatible base URL with `/v1`. */
  baseURL: string;
  apiKey?: string | null;
  model: string;
  /** Documents the search tool returns per query (default 2). */
  topK?: number;
  /** Ask for vLLM-style token ids (`return_token_ids`); only for servers that accept it (vLLM, the AGL gateway, the test server). */
  returnTokenIds?: boolean;
  index?: CorpusSearch;
}

/** The retrieval agent: OpenAI Agents JS on the Chat Completions API with one `search` tool (BM25 over the corpus). */
export function buildRagAgent(o: RagAgentOptions): Agent {
  const index = o.index ?? new CorpusSearch();
  const search = tool({
    name: 'search',
    description: 'Search the Velmora encyclopedia. Returns the best matching documents.',
    parameters: z.object({ query: z.string().describe('keywords to search for') }),
    execute: async ({ query }) => formatHits(index.search(query, o.topK ?? 2)),
  });
  const client = new OpenAI({ baseURL: o.baseURL, apiKey: o.apiKey ?? 'unused', maxRetries: 1 });
  return new Agent({
    name: 'rag_agent',
    instructions: RAG_INSTRUCTIONS,
    model: new OpenAIChatCompletionsModel(client, o.model),
    tools: [search],
    modelSettings: { temperature: 0, ...(o.returnTokenIds ? { providerData: { return_token_ids: true } } : {}) },
  });
}

/** The answer and its scores. */
export interface RagAnswer {
  answer: string;
  f1: number;
  exactMatch: number;
}

/** Answer one question and score it (F1 and exact match against the accepted answers). */
export async function answerQuestion(agent: Agent, task: RagTask): Promise<RagAnswer> {
  const result = await run(agent, task.question, { maxTurns: 4 });
  const answer = typeof result.finalOutput === 'string' ? result.finalOutput.trim() : '';
  return { answer, f1: answerF1(answer, task.answers), exactMatch: exactMatch(answer, task.answers) };
}

/**
 * The rollout function: build the agent from the `llm` resource, answer, and emit the reward with two dimensions,
 * `f1` (primary, what algorithms read) and `exact_match`. The agent's spans reach the store through
 * `@agl/openai-agents` (install it once with `addAglTraceProcessor()`).
 */
export function ragRollout(options: { topK?: number; returnTokenIds?: boolean } = {}): RolloutFn<RagTask> {
  const index = new CorpusSearch();
  return async (task: RagTask, resources: NamedResources, _ctx: AgentContext) => {
    const llm = resources.llm;
    if (llm?.resourceType !== 'llm') throw new Error('the RAG agent needs an llm resource');
    const agent = buildRagAgent({ baseURL: llm.endpoint, apiKey: llm.apiKey, model: llm.model, index, ...options });
    const scored = await answerQuestion(agent, task);
    emitReward({ f1: scored.f1, exact_match: scored.exactMatch }, { primaryKey: 'f1' });
  };
}
