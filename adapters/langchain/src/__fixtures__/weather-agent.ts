// Ordinary LangChain / LangGraph agents with no AGL code: the conformance suite runs them untraced and with
// `node --import @agl/langchain/register`.
import { pathToFileURL } from 'node:url';
import { AIMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { z } from 'zod';

const SYSTEM = 'You are a weather agent. Use the get_weather tool.';
export const getWeather = tool(async ({ city }: { city: string }) => `sunny in ${city}`, {
  name: 'get_weather',
  description: 'Weather of a city',
  schema: z.object({ city: z.string() }),
});

const chatModel = (model: string, baseURL?: string, apiKey?: string): ChatOpenAI =>
  new ChatOpenAI({ model, apiKey: apiKey ?? process.env.OPENAI_API_KEY, configuration: baseURL ? { baseURL } : {}, maxRetries: 0 });

/** `createAgent` from `langchain` v1. */
export function weatherAgent(model: string, baseURL?: string, apiKey?: string, name = 'weather_agent') {
  return createAgent({ name, model: chatModel(model, baseURL, apiKey), tools: [getWeather], systemPrompt: SYSTEM });
}

/** A hand-built LangGraph graph: model node → tools node → model node. */
export function weatherGraph(model: string, baseURL?: string, apiKey?: string) {
  const llm = chatModel(model, baseURL, apiKey).bindTools([getWeather]);
  const callModel = async (state: typeof MessagesAnnotation.State): Promise<{ messages: BaseMessage[] }> => ({
    messages: [await llm.invoke([new SystemMessage(SYSTEM), ...state.messages])],
  });
  const route = (state: typeof MessagesAnnotation.State): 'tools' | '__end__' => {
    const last = state.messages.at(-1) as AIMessage;
    return last.tool_calls?.length ? 'tools' : '__end__';
  };
  return new StateGraph(MessagesAnnotation)
    .addNode('model', callModel)
    .addNode('tools', new ToolNode([getWeather]))
    .addEdge('__start__', 'model')
    .addConditionalEdges('model', route)
    .addEdge('tools', 'model')
    .compile({ name: 'weather_graph' });
}

export const QUESTION = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const model = process.env.AGL_TEST_MODEL ?? 'test-model';
  const useGraph = process.argv.includes('--graph');
  const result = useGraph ? await weatherGraph(model).invoke(QUESTION) : await weatherAgent(model).invoke(QUESTION);
  console.log(String(result.messages.at(-1)?.content));
}
