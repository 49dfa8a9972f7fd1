import { GatewayTraceToTransitions } from '@agl/core/transitions';
import { toyTokenize } from '@agl/testing';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { expect, it } from 'vitest';
import { describeSpanWriteModes, spansOf } from '../__fixtures__/gateway-fixture';

describeSpanWriteModes('gateway with @langchain/openai (spanWrite %s)', (fx) => {
  const model = (streaming = false): ChatOpenAI =>
    new ChatOpenAI({
      model: 'lc-model',
      apiKey: 'lc-key',
      maxRetries: 0,
      streaming,
      configuration: { baseURL: fx().baseURL },
    });

  it('invokes and streams through the gateway; spans carry the backend token ids', async () => {
    const reply = await model().invoke([new HumanMessage('What is 12 + 30?')]);
    expect(reply.content).toBe('42');
    let streamed = '';
    for await (const chunk of await model(true).stream([new HumanMessage('What is 2 * 8?')]))
      streamed += String(chunk.content);
    expect(streamed).toBe('16');
    const transitions = new GatewayTraceToTransitions().transitions(await spansOf(fx().store, fx().rollout.rolloutId));
    expect(transitions.map((t) => t.action.tokenIds)).toEqual([toyTokenize('42'), toyTokenize('16')]);
  });

  it('runs a bound tool round trip', async () => {
    const weather = tool(async ({ input }: { input: string }) => `sunny in ${input}`, {
      name: 'get_weather',
      description: 'Weather of a city',
      schema: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
    });
    const bound = model().bindTools([weather]);
    const first = await bound.invoke([new HumanMessage('Lima')]);
    expect(first.tool_calls?.[0]).toMatchObject({ name: 'get_weather', args: { input: 'Lima' } });
    const call = first.tool_calls![0]!;
    const second = await bound.invoke([
      new HumanMessage('Lima'),
      first,
      new ToolMessage({ tool_call_id: call.id!, content: '3 * 3' }),
    ]);
    expect(second.content).toBe('9');
    const spans = await spansOf(fx().store, fx().rollout.rolloutId);
    const last = spans.at(-1)!;
    expect(last.attributes).toMatchObject({
      'gen_ai.prompt.2.role': 'tool',
      'gen_ai.prompt.2.content': '3 * 3',
      'gen_ai.prompt.1.tool_calls.0.name': 'get_weather',
    });
  });
});
