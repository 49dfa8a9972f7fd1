import { ChatOpenAI } from '@langchain/openai';
import type { AgentContext, RolloutFn } from '@agl/trainer';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { evaluate, type CalcTask } from './calc-tasks';

/** The calculator tool (LangChain). */
export const calculator = tool(({ e }: { e: string }) => evaluate(e), {
  name: 'calc',
  description: 'Evaluate an arithmetic expression such as 1234*567.',
  schema: z.object({ e: z.string().describe('the expression') }),
});

/** Exact match of the agent's final answer. */
export function calcReward(answer: string, task: CalcTask): number {
  return answer.trim() === task.answer ? 1 : 0;
}

/**
 * The Calc-X agent: an ordinary LangChain `createAgent` + `ChatOpenAI` program whose base URL is the AGL gateway
 * (scoped to the rollout). Training rollouts sample at temperature 1, validation is greedy. Returns the reward.
 */
export function calcAgent(options: { gatewayUrl: string; maxTokens?: number }): RolloutFn {
  return async (input: unknown, _resources, ctx: AgentContext) => {
    const task = input as CalcTask;
    const model = new ChatOpenAI({
      model: 'policy',
      apiKey: 'unused',
      temperature: ctx.mode === 'train' ? 1 : 0,
      maxTokens: options.maxTokens ?? 40,
      maxRetries: 1,
      configuration: { baseURL: `${options.gatewayUrl}/rollout/${ctx.rolloutId}/attempt/${ctx.attemptId}/v1` },
    });
    const agent = createAgent({ model, tools: [calculator], name: 'calc-x' });
    let answer = '';
    try {
      const out = await agent.invoke(
        { messages: [{ role: 'user', content: task.question }] },
        { recursionLimit: 6, signal: ctx.signal },
      );
      const last = out.messages.at(-1);
      answer = typeof last?.content === 'string' ? last.content : '';
    } catch {
      return 0; // a runaway tool loop or an unparsable answer earns nothing
    }
    return calcReward(answer, task);
  };
}
