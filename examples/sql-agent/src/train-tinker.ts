/**
 * `agl train` entry for the SQL agent on a real model through the Tinker API (README "Real model"): the same
 * LangGraph write → check → rewrite agent, reaching the model through its LLM resource (the command's Tinker-mode
 * gateway) and reading the seed system prompt from `system_prompt`; execution match is the reward.
 *
 *   npx agl train examples/sql-agent/src/train-tinker.ts --algorithm grpo --backend tinker --base-model Qwen/Qwen3-4B-Instruct-2507
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NamedResources } from '@agl/core';
import { llmBaseUrl, type AgentContext, type RolloutFn } from '@agl/trainer';
import { buildCompanyDatabase } from './company-database';
import { SEED_PROMPT } from './run-sql-agent';
import { sqlAgent } from './sql-agent';
import { splitQuestions, type SqlTask } from './sql-questions';

const dbPath = join(mkdtempSync(join(tmpdir(), 'agl-sql-agent-')), 'company.sqlite');
let inner: RolloutFn<SqlTask> | null = null;

export const agent = async (task: SqlTask, resources: NamedResources, ctx: AgentContext): Promise<number> => {
  const llm = llmBaseUrl(resources, ctx.rolloutId, ctx.attemptId);
  if (!llm) throw new Error('The SQL agent needs an LLM resource: run it with agl train --backend tinker.');
  if (!inner) buildCompanyDatabase(dbPath).close();
  inner ??= sqlAgent({ dbPath });
  const run = inner;
  // The agent reads an `llm` resource: the rollout-scoped gateway URL and the model to sample.
  const scoped: NamedResources = {
    ...resources,
    llm: { resourceType: 'llm', endpoint: llm.url, model: llm.model, apiKey: null, samplingParameters: {} },
  };
  return (await run(task, scoped, ctx)) as number;
};

const { train: trainSet, val: valSet } = splitQuestions();
export const train: SqlTask[] = trainSet;
export const val: SqlTask[] = valSet;
export const config = {
  initialResources: { system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT, engine: 'f-string' } },
};
