// An ordinary AI SDK agent with no AGL code: the conformance suite runs it untraced and with
// `node --import @agl/vercel-ai/register`.
import { pathToFileURL } from 'node:url';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const tools = {
  get_weather: tool({
    description: 'Weather of a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => `sunny in ${city}`,
  }),
};

function settings(model: string, baseURL?: string, apiKey?: string) {
  const openai = createOpenAI({ baseURL: baseURL ?? process.env.OPENAI_BASE_URL, apiKey: apiKey ?? process.env.OPENAI_API_KEY });
  return {
    model: openai.chat(model),
    system: 'You are a weather agent. Use the get_weather tool.',
    prompt: 'What is the weather in Paris?',
    tools,
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    experimental_telemetry: { functionId: 'weather_agent' },
  };
}

/** `generateText` with a tool loop. */
export async function generateWeather(model: string, baseURL?: string, apiKey?: string): Promise<string> {
  return (await generateText(settings(model, baseURL, apiKey))).text;
}

/** `streamText` with a tool loop. */
export async function streamWeather(model: string, baseURL?: string, apiKey?: string): Promise<string> {
  const result = streamText(settings(model, baseURL, apiKey));
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return text;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const model = process.env.AGL_TEST_MODEL ?? 'test-model';
  console.log(process.argv.includes('--stream') ? await streamWeather(model) : await generateWeather(model));
}
