/**
 * The `agl train` entry of the improvement loop: APO searches for a better support prompt on the task set built from
 * production traffic (`agl dataset build`), with the LLM judge and `rubric.md` as the reward (no reward function), and
 * publishes the winner as the latest resources version, which the running service picks up on its next request.
 *
 *   npx agl train src/apo-entry.ts --algorithm apo --train tasks.jsonl --val tasks.val.jsonl
 *   (from examples/support-bot, as every command of its README)
 *
 * Models: `SUPPORT_BOT_MODEL` (the agent), `JUDGE_MODEL`, `CRITIC_MODEL`, `EDITOR_MODEL` (defaults: the offline
 * test LLM's `gpt-4o-mini`, `judge-model`, `critic-model`, `editor-model`), all at `OPENAI_BASE_URL`.
 */
import { readFileSync } from 'node:fs';
import { ChatClient, judgeRewardHook, LlmJudge, type ApoOptions } from '@agl/apo';
import type { NamedResources } from '@agl/core';
import { installAglLangChain } from '@agl/langchain';
import { createSupportAgent, SEED_PROMPT, type SupportResources } from './support-agent';

// Trace the LangChain agent in this process, as `--import @agl/langchain/register` does for the service: the judge
// and APO's critic read each rollout's transcript from its spans.
installAglLangChain();

const baseURL = process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
const apiKey = process.env.OPENAI_API_KEY;
const rubric = readFileSync(new URL('../rubric.md', import.meta.url), 'utf8');
const answer = createSupportAgent();

/** A task of `agl dataset build --source production`: the recorded request (`body.message`) plus `_agl`. */
interface SupportTask {
  body?: { message?: string };
}

/** Answers the task's customer message with the candidate prompt; the judge scores the rollout afterwards. */
export const agent = async (task: SupportTask, resources: NamedResources): Promise<void> => {
  void (await answer(task.body?.message ?? '', resources as SupportResources));
};

/** APO's models and a small search (raise the numbers on a real model). */
export const apo: ApoOptions = {
  llm: { baseURL, ...(apiKey ? { apiKey } : {}) },
  gradientModel: process.env.CRITIC_MODEL ?? 'critic-model',
  applyEditModel: process.env.EDITOR_MODEL ?? 'editor-model',
  beamWidth: 1,
  branchFactor: 2,
  beamRounds: 1,
  gradientBatchSize: 3,
  valBatchSize: 6,
  seed: 1,
  runId: 'support-bot-apo',
};

export const config = {
  nRunners: 4,
  // No reward function: a rollout's reward is the rubric judge's score of its transcript.
  reward: judgeRewardHook(
    new LlmJudge({
      client: new ChatClient({ baseURL, ...(apiKey ? { apiKey } : {}) }),
      model: process.env.JUDGE_MODEL ?? 'judge-model',
      rubric,
    }),
  ),
  // The seed APO starts from; its winner is published with the same LLM resource (which `agl finetune` later points
  // at the tuned model).
  initialResources: {
    system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT, engine: 'f-string' },
    main_llm: { resourceType: 'llm', endpoint: baseURL, model: process.env.SUPPORT_BOT_MODEL ?? 'gpt-4o-mini' },
  },
};
