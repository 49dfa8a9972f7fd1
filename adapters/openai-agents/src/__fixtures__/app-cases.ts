// Ordinary OpenAI Agents SDK apps with no AGL code, in the shape of the SDK's examples (`main().catch(...)`), one per
// case of issue 43: an app whose traces go to OpenAI's dashboard (the SDK's default exporter) next to its own
// processor, an app that sets its own processors, `setTracingDisabled(true)` as in `basic/hello-world-gpt-oss`, a 400
// from the model mid-run (exit in the catch), a tool that throws, and an unhandled rejection. The failing-run tests
// run each one untraced and with `node --import @agl/openai-agents/register`.
import {
  Agent,
  addTraceProcessor,
  getGlobalTraceProvider,
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  run,
  setTraceProcessors,
  setTracingDisabled,
  tool,
  type TracingProcessor,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

const mode = process.argv[2] ?? 'dashboard';

// What reaches OpenAI's trace ingest endpoint, answered here instead of by api.openai.com.
const dashboard: unknown[] = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  if (String(input instanceof Request ? input.url : input).endsWith('/v1/traces/ingest')) {
    const body = JSON.parse(String(init?.body ?? '{}')) as { data?: unknown[] };
    dashboard.push(...(body.data ?? []));
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  }
  return realFetch(input, init);
};

// The app's own processor: records span types into an array.
const recorded: string[] = [];
const recorder: TracingProcessor = {
  onTraceStart: async () => undefined,
  onTraceEnd: async () => undefined,
  onSpanStart: async () => undefined,
  onSpanEnd: async (span) => void recorded.push(span.spanData.type),
  shutdown: async () => undefined,
  forceFlush: async () => undefined,
};
if (mode === 'set-processors') setTraceProcessors([recorder]);
else addTraceProcessor(recorder);
if (mode === 'tracing-disabled') setTracingDisabled(true);

const getWeather = tool({
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    if (mode === 'tool-throws') throw new Error(`weather service down for ${city}`);
    return `sunny in ${city}`;
  },
});

const client = new OpenAI({ maxRetries: 0 });
const modelName = process.env.AGL_TEST_MODEL ?? 'test-model';
const agent = new Agent({
  name: 'weather_agent',
  instructions: 'You are a weather agent. Use the get_weather tool.',
  model:
    mode === 'tracing-disabled'
      ? new OpenAIChatCompletionsModel(client, modelName)
      : new OpenAIResponsesModel(client, modelName),
  tools: [getWeather],
});

async function main(): Promise<void> {
  const failing = mode === 'model-400' || mode === 'unhandled';
  const result = await run(agent, failing ? 'fail mid-run: weather in Paris?' : 'What is the weather in Paris?');
  console.log(String(result.finalOutput));
  await getGlobalTraceProvider().forceFlush();
  console.log(`own processor spans: ${recorded.length}, dashboard items: ${dashboard.length}`);
}

if (mode === 'unhandled') {
  await main();
} else {
  main().catch((err: unknown) => {
    console.error(`run failed: ${(err as Error).message}`);
    process.exit(1);
  });
}
