import { ChatOpenAI } from '@langchain/openai';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { orderStatusLine } from './orders';

/** The order-lookup tool the agent calls (LangChain). */
export const orderStatus = tool(({ orderId }: { orderId: string }) => orderStatusLine(orderId), {
  name: 'order_status',
  description: "Look up an order's status and arrival date by its id, such as A-1002.",
  schema: z.object({ orderId: z.string().describe('the order id, e.g. A-1002') }),
});

/** Options of {@link createSupportAgent}. */
export interface SupportAgentOptions {
  /** OpenAI-compatible base URL (default: `OPENAI_BASE_URL`, else OpenAI's). */
  baseURL?: string;
  /** Default: `OPENAI_API_KEY`, else a placeholder (test servers ignore it). */
  apiKey?: string;
  /** Default: `SUPPORT_BOT_MODEL`, else `gpt-4o-mini`. */
  model?: string;
}

/** The prompt the service starts with, until a better one is published (e.g. APO's winner). */
export const SEED_PROMPT =
  'You are the support desk of a web shop. Use the order_status tool to look up any order the customer mentions, ' +
  'then answer in one short sentence.';

/** What a published resources version may change: the prompt (`system_prompt`) and the model (`main_llm`). */
export interface SupportResources {
  system_prompt?: { resourceType: string; template?: string };
  main_llm?: { resourceType: string; model?: string };
}

/** Answers one customer message, with the prompt and model of `resources` when given (else the defaults). */
export type SupportAnswer = (message: string, resources?: SupportResources) => Promise<string>;

/**
 * The support agent: an ordinary LangChain `createAgent` + `ChatOpenAI` program with one tool. Nothing in it knows
 * about AGL: the `@agl/langchain/register` preload traces it, and `observeHandler` scopes each request to a rollout.
 * Each call builds its prompt and picks its model from `resources` (the latest published version: APO's winning
 * prompt, a fine-tuned model), falling back to {@link SEED_PROMPT} and the configured model.
 */
export function createSupportAgent(options: SupportAgentOptions = {}): SupportAnswer {
  const agents = new Map<string, ReturnType<typeof createAgent>>();
  const agentFor = (prompt: string, modelName: string): ReturnType<typeof createAgent> => {
    const key = `${modelName}\n${prompt}`;
    let agent = agents.get(key);
    if (!agent) {
      const model = new ChatOpenAI({
        model: modelName,
        apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'sk-unused',
        temperature: 0,
        maxRetries: 1,
        configuration: { baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL },
      });
      agent = createAgent({ model, tools: [orderStatus], systemPrompt: prompt, name: 'support-bot' });
      agents.set(key, agent);
    }
    return agent;
  };
  const defaultModel = options.model ?? process.env.SUPPORT_BOT_MODEL ?? 'gpt-4o-mini';
  return async (message, resources) => {
    const prompt = resources?.system_prompt?.template ?? SEED_PROMPT;
    const agent = agentFor(prompt, resources?.main_llm?.model ?? defaultModel);
    const out = await agent.invoke({ messages: [{ role: 'user', content: message }] }, { recursionLimit: 6 });
    const last = out.messages.at(-1);
    return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  };
}
