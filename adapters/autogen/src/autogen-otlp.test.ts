import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptedRollout } from '@agl/core/schema';
import { StoreClient } from '@agl/store/client';
import { AUTOGEN_GROUP_CHAT } from './__fixtures__/autogen-group-chat';
import { exportSpanTree, rolloutResourceAttributes, startAglStoreServe, type AglStoreServe } from '@agl/testing';
import { autogenTraceAdapter } from './index';

const TOKEN = 'autogen-otlp-token';

/** Exports the synthetic AutoGen group chat the way Python does: resource attributes from OTEL_RESOURCE_ATTRIBUTES, a batch processor. */
async function exportGroupChat(exporter: SpanExporter, rollout: AttemptedRollout): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(rolloutResourceAttributes('autogen-group-chat', rollout)),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  await exportSpanTree(provider, { name: 'autogen-core', version: '0.7.5' }, AUTOGEN_GROUP_CHAT);
}

describe('AutoGen group chat over OTLP → agl store serve → autogenTraceAdapter', () => {
  let serve: AglStoreServe;
  let client: StoreClient;
  const rollouts: Record<'protobuf' | 'json', AttemptedRollout | undefined> = { protobuf: undefined, json: undefined };

  beforeAll(async () => {
    // `agl store serve --memory` as a child process.
    serve = await startAglStoreServe(['--memory'], TOKEN);
    const { url } = serve;
    client = new StoreClient({ url, token: TOKEN, retryDelays: [] });
    const endpoint = `${url}/v1/traces`;
    const headers = { Authorization: `Bearer ${TOKEN}` };
    rollouts.protobuf = await client.startRollout({ input: { task: 'paris', encoding: 'protobuf' } });
    rollouts.json = await client.startRollout({ input: { task: 'paris', encoding: 'json' } });
    await exportGroupChat(new ProtoExporter({ url: endpoint, headers }), rollouts.protobuf);
    await exportGroupChat(new JsonExporter({ url: endpoint, headers }), rollouts.json);
  }, 120_000);
  afterAll(async () => {
    await serve?.stop();
  });

  for (const encoding of ['protobuf', 'json'] as const) {
    describe(`${encoding} export`, () => {
      const fromStore = (agentMatch?: string | RegExp) =>
        autogenTraceAdapter({ agentMatch }).fromStore({ store: client, rolloutId: rollouts[encoding]!.rolloutId });

      it('stores every span with its owner (2 create_agent, 2 process, 2 invoke_agent, 3 LLM, 1 execute_tool)', async () => {
        const page = await client.querySpans({ rolloutId: rollouts[encoding]!.rolloutId });
        expect(page.items).toHaveLength(10);
        expect(page.items.map((s) => s.name)).toEqual(
          expect.arrayContaining([
            'invoke_agent planner',
            'execute_tool get_weather',
            'chat gpt-4o-mini',
            'openai.chat',
          ]),
        );
      });

      it("agentMatch 'planner' keeps the planner's two chat calls: tool call, then the answer after the tool result", async () => {
        const trajectory = await fromStore('planner');
        const [first, second] = trajectory.transitions;
        expect(trajectory.transitions).toHaveLength(2);
        expect(trajectory.transitions.map((t) => t.agentName)).toEqual(['planner', 'planner']);
        expect(first!.responseId).toBe('chatcmpl-planner-1');
        expect(first!.state.messages).toEqual([
          { role: 'system', content: 'You are the planner. Use tools.' },
          { role: 'user', content: 'Plan a day in Paris that fits the weather.' },
        ]);
        expect(first!.action.message).toMatchObject({
          role: 'assistant',
          toolCalls: [{ id: 'call_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        });
        expect(second!.state.messages.slice(-1)).toEqual([
          { role: 'tool', content: 'rain, 14°C', toolCallId: 'call_weather_1' },
        ]);
        expect(second!.action.message).toMatchObject({
          role: 'assistant',
          content: 'Louvre in the morning, Orsay after lunch.',
        });
        expect(second!.done).toBe(true);
      });

      it("agentMatch 'critic' keeps only the critic's OpenLLMetry openai.chat call", async () => {
        const trajectory = await fromStore('critic');
        expect(trajectory.transitions).toHaveLength(1);
        expect(trajectory.transitions[0]).toMatchObject({
          agentName: 'critic',
          responseId: 'chatcmpl-critic-1',
          action: { message: { role: 'assistant', content: 'APPROVE' } },
        });
        expect(trajectory.transitions[0]!.state.messages[0]).toEqual({
          role: 'system',
          content: 'You are the critic. Reply APPROVE when the plan is good.',
        });
      });

      it('without agentMatch every call is kept, in order, labelled with its agent; an unknown agent keeps none', async () => {
        expect((await fromStore()).transitions.map((t) => [t.agentName, t.responseId])).toEqual([
          ['planner', 'chatcmpl-planner-1'],
          ['planner', 'chatcmpl-planner-2'],
          ['critic', 'chatcmpl-critic-1'],
        ]);
        expect((await fromStore(/^(planner|critic)$/)).transitions).toHaveLength(3);
        expect((await fromStore('writer')).transitions).toEqual([]);
      });
    });
  }
});
