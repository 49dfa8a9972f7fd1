import { optimizePrompt, type ApoResult, type OptimizePromptSetup } from '@agl/apo';
import { formatPromptTemplate, type NamedResources } from '@agl/core';
import { AglCallbackHandler } from '@agl/langchain';
import type { AgentContext, RolloutFn } from '@agl/trainer';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { calcReward, calculator } from './calc-agent';
import { makeTasks, type CalcTask } from './calc-tasks';

/** The seed system prompt: deliberately vague. */
export const CALC_SEED_PROMPT = 'You are a helpful math assistant.';

/**
 * The Calc-X agent with an optimisable system prompt: the same `createAgent` + `ChatOpenAI` + `calc` tool as the GRPO
 * demo, but the model is the `llm` resource and the system prompt is the `system_prompt` resource. Traced with an
 * explicit `AglCallbackHandler`; returns the exact-match reward.
 */
export function calcApoAgent(): RolloutFn<CalcTask> {
  return async (task: CalcTask, resources: NamedResources, ctx: AgentContext) => {
    const { llm, system_prompt: prompt } = resources;
    if (llm?.resourceType !== 'llm' || prompt?.resourceType !== 'prompt_template')
      throw new Error('the Calc-X APO agent needs the llm and system_prompt resources');
    const model = new ChatOpenAI({
      model: llm.model,
      apiKey: llm.apiKey ?? 'unused',
      temperature: 0,
      maxRetries: 1,
      configuration: { baseURL: llm.endpoint },
    });
    const agent = createAgent({
      model,
      tools: [calculator],
      systemPrompt: formatPromptTemplate(prompt.template, {}),
      name: 'calc-x',
    });
    const out = await agent.invoke(
      { messages: [{ role: 'user', content: task.question }] },
      { callbacks: [new AglCallbackHandler()], recursionLimit: 6, signal: ctx.signal },
    );
    const last = out.messages.at(-1);
    return calcReward(typeof last?.content === 'string' ? last.content : '', task);
  };
}

/** Options of {@link runCalcApo}: the endpoint and models, and a SQLite path or store URL. */
export interface CalcApoOptions extends OptimizePromptSetup {
  store: string;
}

/** Optimise the Calc-X agent's system prompt with APO (train and held-out val tasks as the GRPO demo draws them). */
export async function runCalcApo(o: CalcApoOptions): Promise<ApoResult> {
  return optimizePrompt({
    ...o,
    apo: { beamWidth: 2, branchFactor: 2, beamRounds: 2, gradientBatchSize: 4, valBatchSize: 6, seed: 3, ...o.apo },
    agent: calcApoAgent(),
    train: makeTasks({ n: 12, seed: 11, split: 'train' }),
    val: makeTasks({ n: 12, seed: 12, split: 'val' }),
    seedPrompt: CALC_SEED_PROMPT,
  });
}
