import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptedRollout } from '@agl/core/schema';
import { MemoryStore } from '@agl/store';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { crewAiCrew, type CrewStyle } from './__fixtures__/crewai-crew';
import { exportSpanTree, rolloutResourceAttributes } from '@agl/testing';
import { crewAiRoleFromSpanName, crewAiTraceAdapter } from './index';

const TOKEN = 'crewai-otlp-token';

async function exportCrew(exporter: SpanExporter, rollout: AttemptedRollout, style: CrewStyle): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(rolloutResourceAttributes('crewai-crew', rollout)),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  await exportSpanTree(
    provider,
    { name: 'openinference.instrumentation.crewai', version: '0.1.11' },
    crewAiCrew(style),
  );
}

const CASES = [
  ['protobuf', 'wrapper'],
  ['json', 'wrapper'],
  ['protobuf', 'event-bus'],
  ['json', 'event-bus'],
] as const;

describe('CrewAI (OpenInference) over OTLP → store server → crewAiTraceAdapter', () => {
  const store = new MemoryStore({ scanDebounceSeconds: 0 });
  let server: StoreServer;
  const rollouts = new Map<string, AttemptedRollout>();

  beforeAll(async () => {
    server = await createStoreServer({ store, host: '127.0.0.1', port: 0, token: TOKEN });
    const headers = { Authorization: `Bearer ${TOKEN}` };
    for (const [encoding, style] of CASES) {
      const rollout = await store.startRollout({ input: { topic: 'Rhine', encoding, style } });
      rollouts.set(`${encoding}/${style}`, rollout);
      const url = server.otlpTracesEndpoint();
      await exportCrew(
        encoding === 'protobuf' ? new ProtoExporter({ url, headers }) : new JsonExporter({ url, headers }),
        rollout,
        style,
      );
    }
  });
  afterAll(async () => {
    await server.close();
    await store.close();
  });

  for (const [encoding, style] of CASES) {
    describe(`${encoding} export, ${style} instrumentation`, () => {
      const fromStore = (agentMatch?: string | RegExp) =>
        crewAiTraceAdapter({ agentMatch }).fromStore({
          store,
          rolloutId: rollouts.get(`${encoding}/${style}`)!.rolloutId,
        });

      it("agentMatch 'Researcher' keeps the researcher's two LLM calls, with the tool call and the tool result", async () => {
        const { transitions } = await fromStore('Researcher');
        expect(transitions.map((t) => t.agentName)).toEqual(['Researcher', 'Researcher']);
        expect(transitions[0]!.state.messages).toEqual([
          { role: 'system', content: 'You are Researcher.' },
          { role: 'user', content: 'Find three facts about the Rhine river' },
        ]);
        expect(transitions[0]!.action.message).toMatchObject({
          role: 'assistant',
          toolCalls: [{ id: 'call_search_1', name: 'search', arguments: '{"query":"Rhine river facts"}' }],
        });
        expect(transitions[1]!.state.messages[2]).toEqual({
          role: 'tool',
          content: '1233 km long',
          toolCallId: 'call_search_1',
        });
        expect(transitions[1]!.action.message).toMatchObject({
          role: 'assistant',
          content: 'The Rhine is 1233 km long.',
        });
      });

      it("agentMatch 'Writer' keeps only the writer's call; no filter keeps all three in order", async () => {
        const writer = (await fromStore('Writer')).transitions;
        expect(writer).toHaveLength(1);
        expect(writer[0]).toMatchObject({
          agentName: 'Writer',
          action: { message: { content: 'The Rhine flows 1233 km.' } },
          done: true,
        });
        expect((await fromStore()).transitions.map((t) => t.agentName)).toEqual(['Researcher', 'Researcher', 'Writer']);
        expect((await fromStore(/^Research/)).transitions).toHaveLength(2);
        expect((await fromStore('Reviewer')).transitions).toEqual([]);
      });
    });
  }

  it('without the preset, event-bus agent spans (no graph.node.id) have no agent name, so agentMatch finds nothing', async () => {
    const rolloutId = rollouts.get('json/event-bus')!.rolloutId;
    const { TraceToTransitions } = await import('@agl/core/transitions');
    expect(
      (await new TraceToTransitions({ agentMatch: 'Researcher' }).fromStore({ store, rolloutId })).transitions,
    ).toEqual([]);
    expect(
      (await crewAiTraceAdapter({ agentMatch: 'Researcher' }).fromStore({ store, rolloutId })).transitions,
    ).toHaveLength(2);
  });

  it('crewAiRoleFromSpanName reads both naming schemes', () => {
    expect(crewAiRoleFromSpanName('Senior Researcher._execute_core')).toBe('Senior Researcher');
    expect(crewAiRoleFromSpanName('Writer.Write a two-sentence summary of the facts.execute')).toBe('Writer');
    expect(crewAiRoleFromSpanName('Crew.kickoff')).toBeNull();
  });
});
