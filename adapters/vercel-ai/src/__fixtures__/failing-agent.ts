// Ordinary AI SDK scripts with no AGL code, in the shape of the SDK's examples (`main().catch(...)`), that go wrong:
// the model answers 400, a stream errors, a tool throws. Each makes a second, successful call after the failure.
// The failing-run tests run each one untraced and with `node --import @agl/vercel-ai/register`.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool, ToolLoopAgent } from 'ai';
import { z } from 'zod';

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const model = openai.chat(process.env.AGL_TEST_MODEL ?? 'test-model');
const mode = process.argv[2] ?? 'generate-400';

const weather = tool({
  description: 'Weather of a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }: { city: string }): Promise<string> => {
    if (mode === 'tool-throws') throw new Error(`weather service down for ${city}`);
    return `sunny in ${city}`;
  },
});

const call = (prompt: string, functionId: string) => ({
  model,
  prompt,
  tools: { get_weather: weather },
  stopWhen: stepCountIs(3),
  maxRetries: 0,
  experimental_telemetry: { functionId },
});

async function first(): Promise<string> {
  if (mode === 'agent-400') {
    const agent = new ToolLoopAgent({
      model,
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
      experimental_telemetry: { functionId: 'first' },
    });
    return (await agent.generate({ prompt: 'fail: weather in Paris?' })).text;
  }
  if (mode === 'stream-400') {
    const result = streamText({
      ...call('fail: weather in Paris?', 'first'),
      onError: ({ error }) => console.log(`stream error: ${(error as Error).message}`),
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    return text;
  }
  const prompt = mode === 'tool-throws' ? 'weather in Paris?' : 'fail: weather in Paris?';
  return (await generateText(call(prompt, 'first'))).text;
}

async function main(): Promise<void> {
  try {
    console.log(`first: ${await first()}`);
  } catch (err) {
    console.log(`first failed: ${(err as Error).message}`);
  }
  console.log(`second: ${(await generateText(call('weather in Rome?', 'second'))).text}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
