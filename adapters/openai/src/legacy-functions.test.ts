import OpenAI from 'openai';
import { normalizeLlmCall, TraceToTransitions } from '@agl/core/transitions';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import {
  normalizeTransitions,
  startOpenAiTestServer,
  WEATHER_TASK,
  type OpenAiTestServer,
  type TestLlmRequest,
} from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentOpenAI } from './instrument-openai';

// The legacy function-calling API (`functions` / `function_call`, before tools): call get_weather, then answer the
// `function` result message.
const respond = (request: TestLlmRequest) =>
  request.messages.some((m) => m.role === 'function')
    ? { content: WEATHER_TASK.answer }
    : { toolCalls: [{ name: WEATHER_TASK.tool, arguments: WEATHER_TASK.toolArgs }] };

const functions: OpenAI.Chat.ChatCompletionCreateParams.Function[] = [
  {
    name: WEATHER_TASK.tool,
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
];

async function legacyAgent(client: OpenAI, stream: boolean): Promise<void> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: WEATHER_TASK.user }];
  for (let step = 0; step < 3; step += 1) {
    let call: { name: string; arguments: string } | undefined;
    if (stream) {
      const chunks = await client.chat.completions.create({
        model: WEATHER_TASK.model,
        messages,
        functions,
        stream: true,
      });
      for await (const chunk of chunks) {
        const part = chunk.choices[0]?.delta.function_call;
        if (part)
          call = {
            name: (call?.name ?? '') + (part.name ?? ''),
            arguments: (call?.arguments ?? '') + (part.arguments ?? ''),
          };
      }
    } else {
      call =
        (await client.chat.completions.create({ model: WEATHER_TASK.model, messages, functions })).choices[0]?.message
          .function_call ?? undefined;
    }
    if (!call) return;
    messages.push({ role: 'assistant', content: null, function_call: call });
    messages.push({
      role: 'function',
      name: call.name,
      content: `sunny in ${(JSON.parse(call.arguments) as { city: string }).city}`,
    });
  }
}

describe('legacy function calling (functions / function_call)', () => {
  let llm: OpenAiTestServer;
  beforeAll(async () => {
    llm = await startOpenAiTestServer({ respond });
  });
  afterAll(() => llm.close());

  for (const stream of [false, true]) {
    it(
      `records the functions, the call and the function result like tools${stream ? ' (streaming)' : ''}`,
      { timeout: 30_000 },
      async () => {
        const client = instrumentOpenAI(new OpenAI({ baseURL: llm.baseURL, apiKey: 'k', maxRetries: 0 }));
        const store = new MemoryStore();
        const rollout = await store.startRollout({ input: {} });
        await withRolloutContext({ rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store }, () =>
          legacyAgent(client, stream),
        );
        await getAglTracer().forceFlush();
        const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
        expect(spans).toHaveLength(2);
        const args = JSON.stringify(WEATHER_TASK.toolArgs);
        expect(spans[0]!.attributes).toMatchObject({
          'gen_ai.request.functions.0.name': WEATHER_TASK.tool,
          'gen_ai.request.functions.0.description': 'Weather of a city',
          'gen_ai.completion.0.finish_reason': 'function_call',
          'gen_ai.completion.0.tool_calls.0.name': WEATHER_TASK.tool,
          'gen_ai.completion.0.tool_calls.0.arguments': args,
        });
        expect(spans[1]!.attributes).toMatchObject({
          'gen_ai.prompt.1.role': 'assistant',
          'gen_ai.prompt.1.tool_calls.0.name': WEATHER_TASK.tool,
          'gen_ai.prompt.1.tool_calls.0.arguments': args,
          'gen_ai.prompt.2.role': 'function',
          'gen_ai.prompt.2.name': WEATHER_TASK.tool,
          'gen_ai.prompt.2.content': WEATHER_TASK.toolResult,
          'gen_ai.completion.0.content': WEATHER_TASK.answer,
        });
        const call = { name: WEATHER_TASK.tool, args: WEATHER_TASK.toolArgs };
        const user = { role: 'user', content: WEATHER_TASK.user };
        const transitions = new TraceToTransitions().transitions(spans);
        expect(normalizeTransitions(transitions)).toEqual([
          { agentName: null, state: [user], action: { content: null, toolCalls: [call] } },
          {
            agentName: null,
            state: [
              user,
              { role: 'assistant', content: null, toolCalls: [call] },
              { role: 'function', content: WEATHER_TASK.toolResult },
            ],
            action: { content: WEATHER_TASK.answer },
          },
        ]);
        expect(transitions[1]!.state.messages[2]).toMatchObject({ role: 'function', name: WEATHER_TASK.tool });
        expect(normalizeLlmCall(spans[0]!.attributes)?.tools?.map((t) => t.function.name)).toEqual([WEATHER_TASK.tool]);
      },
    );
  }
});
