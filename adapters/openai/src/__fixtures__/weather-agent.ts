// An ordinary agent on the plain `openai` client, with no AGL code: the conformance suite runs it untraced and with
// `node --import @agl/openai/register`.
import OpenAI from 'openai';
import { pathToFileURL } from 'node:url';

const SYSTEM = 'You are a weather agent. Use the get_weather tool.';
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  },
];
const getWeather = (args: { city: string }): string => `sunny in ${args.city}`;

/** Chat Completions tool loop; `stream` folds streamed chunks; vLLM token ids asked with `return_token_ids`. */
export async function runChatAgent(client: OpenAI, model: string, stream = false): Promise<string> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'What is the weather in Paris?' },
  ];
  for (let step = 0; step < 5; step += 1) {
    const body = { model, messages, tools, return_token_ids: true, logprobs: true } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    let message: OpenAI.ChatCompletionMessage;
    if (stream) {
      const chunks = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
      let content = '';
      const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
      for await (const chunk of chunks) {
        const delta = chunk.choices[0]?.delta;
        content += delta?.content ?? '';
        for (const part of delta?.tool_calls ?? []) {
          const call = (calls[part.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          call.id = part.id ?? call.id;
          call.function.name += part.function?.name ?? '';
          call.function.arguments += part.function?.arguments ?? '';
        }
      }
      message = { role: 'assistant', content: content || null, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) };
    } else {
      message = (await client.chat.completions.create(body)).choices[0]!.message;
    }
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      messages.push({ role: 'tool', tool_call_id: call.id, content: getWeather(JSON.parse(call.function.arguments) as { city: string }) });
    }
  }
  throw new Error('no answer after 5 steps');
}

/** The same loop on the Responses API. */
export async function runResponsesAgent(client: OpenAI, model: string): Promise<string> {
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const fnTools: OpenAI.Responses.FunctionTool[] = tools.map((t) => ({ type: 'function', name: t.type === 'function' ? t.function.name : '', description: 'Weather of a city', parameters: t.type === 'function' ? (t.function.parameters ?? null) : null, strict: false }));
  for (let step = 0; step < 5; step += 1) {
    const response = await client.responses.create({ model, instructions: SYSTEM, input, tools: fnTools });
    const calls = response.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
    if (calls.length === 0) return response.output_text;
    for (const call of calls) {
      input.push(call, { type: 'function_call_output', call_id: call.call_id, output: getWeather(JSON.parse(call.arguments) as { city: string }) });
    }
  }
  throw new Error('no answer after 5 steps');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const client = new OpenAI();
  console.log(await runChatAgent(client, process.env.AGL_TEST_MODEL ?? 'test-model'));
}
