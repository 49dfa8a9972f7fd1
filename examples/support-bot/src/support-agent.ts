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

const SYSTEM =
  'You are the support desk of a web shop. Use the order_status tool to look up any order the customer mentions, ' +
  'then answer in one short sentence.';

/**
 * The support agent: an ordinary LangChain `createAgent` + `ChatOpenAI` program with one tool. Nothing in it knows
 * about AGL: the `@agl/langchain/register` preload traces it, and `observeHandler` scopes each request to a rollout.
 * Returns a function that answers one customer message.
 */
export function createSupportAgent(options: SupportAgentOptions = {}): (message: string) => Promise<string> {
  const model = new ChatOpenAI({
    model: options.model ?? process.env.SUPPORT_BOT_MODEL ?? 'gpt-4o-mini',
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? 'sk-unused',
    temperature: 0,
    maxRetries: 1,
    configuration: { baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL },
  });
  const agent = createAgent({ model, tools: [orderStatus], systemPrompt: SYSTEM, name: 'support-bot' });
  return async (message) => {
    const out = await agent.invoke({ messages: [{ role: 'user', content: message }] }, { recursionLimit: 6 });
    const last = out.messages.at(-1);
    return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  };
}
