// An ordinary OpenAI Agents SDK agent with no AGL code: the conformance suite runs it untraced and with
// `node --import @agl/openai-agents/register`.
import { pathToFileURL } from 'node:url';
import { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

export const getWeather = tool({
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

/** The weather agent on the Responses API (default) or the Chat Completions model. */
export function weatherAgent(options: { api: 'responses' | 'chat'; model: string; client?: OpenAI; name?: string }): Agent {
  const client = options.client ?? new OpenAI();
  const model = options.api === 'chat' ? new OpenAIChatCompletionsModel(client, options.model) : new OpenAIResponsesModel(client, options.model);
  return new Agent({
    name: options.name ?? 'weather_agent',
    instructions: 'You are a weather agent. Use the get_weather tool.',
    model,
    tools: [getWeather],
    modelSettings: { providerData: { return_token_ids: true } },
  });
}

export async function runWeather(agent: Agent): Promise<string> {
  const result = await run(agent, 'What is the weather in Paris?');
  return String(result.finalOutput);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const api = process.argv.includes('--chat') ? 'chat' : 'responses';
  console.log(await runWeather(weatherAgent({ api, model: process.env.AGL_TEST_MODEL ?? 'test-model' })));
}
