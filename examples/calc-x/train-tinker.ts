/**
 * `agl train` entry for Calc-X on a real model through the Tinker API (README "Real model"): the same LangChain
 * calculator agent as the demo, reaching the model through its LLM resource (the command's Tinker-mode gateway).
 *
 *   npx agl train examples/calc-x/train-tinker.ts --algorithm grpo --backend tinker --base-model Qwen/Qwen3-4B-Instruct-2507
 */
import type { NamedResources } from '@agl/core';
import { llmBaseUrl, type AgentContext } from '@agl/trainer';
import { calcAgent } from './src/calc-agent';
import { makeTasks, type CalcTask } from './src/calc-tasks';

export const agent = (task: CalcTask, resources: NamedResources, ctx: AgentContext): Promise<number> => {
  const llm = llmBaseUrl(resources, ctx.rolloutId, ctx.attemptId);
  if (!llm) throw new Error('Calc-X needs an LLM resource: run it with agl train --backend tinker (or publish one).');
  // calcAgent scopes the gateway URL to the rollout itself: hand it the gateway's origin.
  const gatewayUrl = llm.url.slice(0, llm.url.indexOf('/rollout/'));
  return calcAgent({ gatewayUrl, maxTokens: 256 })(task, resources, ctx) as Promise<number>;
};

export const train: CalcTask[] = makeTasks({ n: 512, seed: 1, split: 'train' });
export const val: CalcTask[] = makeTasks({ n: 32, seed: 1, split: 'val' });
