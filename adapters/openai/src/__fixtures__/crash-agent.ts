// An ordinary openai-node tool agent with no AGL code, ending badly in the ways real programs do. The mode is argv[2]:
//   exit-in-catch  main().catch((e) => { console.error(...); process.exit(1) })   (model answers 400 mid-run)
//   unhandled      main() not awaited: an unhandled rejection                       (model answers 400 mid-run)
//   tla            await main() at top level: a rejected top-level await           (model answers 400 mid-run)
//   tool-throws    the tool throws, uncaught
//   exit-mid-call  process.exit(3) from a timer while a call is still in flight
//   sigterm-mid-call  SIGTERM (no handler of its own) while a call is still in flight
//   unread-stream  asks for a stream, never reads it, prints it, and ends normally
//   unread-stream-exit0  the same, then process.exit(0)
//   responses-stream  responses.stream() twice: read by finalResponse(), then by iteration
//   responses-stream-fails  responses.stream() whose model answers 400, awaited at top level (its stack is printed)
import OpenAI from 'openai';
import { inspect } from 'node:util';

const client = new OpenAI({ maxRetries: 0 });
const model = process.env.AGL_TEST_MODEL ?? 'test-model';
const mode = process.argv[2];
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  },
];

function getWeather(args: { city: string }): string {
  if (mode === 'tool-throws') throw new Error(`weather service down for ${args.city}`);
  return `sunny in ${args.city}`;
}

async function main(): Promise<void> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
  if (mode === 'exit-mid-call') setTimeout(() => process.exit(3), 300);
  if (mode === 'sigterm-mid-call') setTimeout(() => process.kill(process.pid, 'SIGTERM'), 300);
  for (let step = 0; step < 5; step += 1) {
    const message = (await client.chat.completions.create({ model, messages, tools })).choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) {
      console.log(message.content);
      return;
    }
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content: getWeather(JSON.parse(call.function.arguments) as { city: string }),
      });
    }
  }
}

if (mode === 'responses-stream-fails') {
  await client.responses.stream({ model, input: 'fail: weather in Paris?' }).finalResponse();
} else if (mode === 'responses-stream') {
  const final = await client.responses.stream({ model, input: 'What is the weather in Paris?' }).finalResponse();
  console.log('final:', final.status);
  const types: string[] = [];
  for await (const event of client.responses.stream({ model, input: 'What is the weather in Rome?' })) {
    types.push(event.type);
  }
  console.log('last event:', types.at(-1));
} else if (mode === 'unread-stream' || mode === 'unread-stream-exit0') {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  console.log(inspect(stream, { depth: 0 }), stream instanceof Object, Object.keys(stream).join(','));
  if (mode === 'unread-stream-exit0') process.exit(0);
} else if (mode === 'exit-in-catch') {
  main().catch((error: unknown) => {
    console.error('agent failed:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
} else if (mode === 'unhandled') {
  void main();
} else {
  await main();
}
