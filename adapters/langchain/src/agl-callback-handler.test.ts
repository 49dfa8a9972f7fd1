import { fileURLToPath } from 'node:url';
import { TraceToTransitions } from '@agl/core/transitions';
import { ATTR_AGENT_NAME } from '@agl/core/semconv';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { describeAdapterConformance, memoryStoreServing, startOpenAiTestServer } from '@agl/testing';
import { MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { AglCallbackHandler, fromLangChainResult } from './agl-callback-handler';
import { installAglLangChain } from './install';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { QUESTION, weatherAgent, weatherGraph } from './__fixtures__/weather-agent';

const agentFile = fileURLToPath(new URL('./__fixtures__/weather-agent.ts', import.meta.url));
const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../../packages/core/src/transitions/__fixtures__/langchain/${name}.json`, import.meta.url));

describeAdapterConformance({
  name: '@agl/langchain',
  ...memoryStoreServing({ MemoryStore, createStoreServer }),
  targets: [
    {
      name: 'createAgent',
      agentName: 'weather_agent',
      explicit: async (env) => {
        await weatherAgent(env.model, env.baseURL, env.apiKey).invoke(QUESTION, {
          callbacks: [new AglCallbackHandler()],
        });
      },
      preload: { agentFile, register: '@agl/langchain/register' },
      fixturePath: fixture('create-agent'),
    },
    {
      name: 'LangGraph graph',
      agentName: 'weather_graph',
      explicit: async (env) => {
        await weatherGraph(env.model, env.baseURL, env.apiKey).invoke(QUESTION, {
          callbacks: [new AglCallbackHandler()],
        });
      },
      preload: { agentFile, register: '@agl/langchain/register', args: ['--graph'] },
      fixturePath: fixture('langgraph'),
    },
  ],
});

describe('multi-agent LangGraph', () => {
  it('agentMatch selects exactly one agent of two in one graph', { timeout: 60_000 }, async () => {
    const llm = await startOpenAiTestServer({
      respond: (r) =>
        r.messages.some((m) => m.role === 'tool')
          ? { content: `done: ${r.messages.at(-1)?.content}` }
          : { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
    });
    try {
      const researcher = weatherAgent('test-model', llm.baseURL, 'k', 'researcher');
      const writer = weatherAgent('test-model', llm.baseURL, 'k', 'writer');
      const team = new StateGraph(MessagesAnnotation)
        .addNode('researcher', async (s: typeof MessagesAnnotation.State) => ({
          messages: (await researcher.invoke({ messages: s.messages })).messages.slice(s.messages.length),
        }))
        .addNode('writer', async (s: typeof MessagesAnnotation.State) => ({
          messages: (await writer.invoke({ messages: s.messages.slice(0, 1) })).messages.slice(1),
        }))
        .addEdge('__start__', 'researcher')
        .addEdge('researcher', 'writer')
        .compile({ name: 'team' });
      const store = new MemoryStore();
      const rollout = await store.startRollout({ input: {} });
      await withRolloutContext({ rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store }, () =>
        team.invoke(QUESTION, { callbacks: [new AglCallbackHandler()] }),
      );
      await getAglTracer().forceFlush();
      const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
      expect(
        spans
          .filter((s) => s.attributes[ATTR_AGENT_NAME] !== undefined)
          .map((s) => s.attributes[ATTR_AGENT_NAME])
          .sort(),
      ).toEqual(['researcher', 'team', 'writer']);
      const all = new TraceToTransitions().transitions(spans);
      expect(all.map((t) => t.agentName)).toEqual(['researcher', 'researcher', 'writer', 'writer']);
      const writerOnly = new TraceToTransitions({ agentMatch: 'writer' }).transitions(spans);
      expect(writerOnly).toHaveLength(2);
      expect(writerOnly.every((t) => t.agentName === 'writer')).toBe(true);
      expect(writerOnly.map((t) => t.spanIds[0])).toEqual(all.slice(2).map((t) => t.spanIds[0]));
      expect(new TraceToTransitions({ agentMatch: /^research/ }).transitions(spans).map((t) => t.agentName)).toEqual([
        'researcher',
        'researcher',
      ]);
    } finally {
      await llm.close();
    }
  });
});

describe('installAglLangChain (global configure hook)', () => {
  it('traces a plain runnable with no callbacks passed', { timeout: 30_000 }, async () => {
    installAglLangChain();
    const chain = RunnableLambda.from((q: string) => [new HumanMessage(q)]).pipe(
      new FakeListChatModel({ responses: ['It is sunny.'] }),
    );
    const store = new MemoryStore();
    const rollout = await store.startRollout({ input: {} });
    await withRolloutContext({ rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store }, () =>
      chain.invoke('Weather?'),
    );
    await getAglTracer().forceFlush();
    const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
    const root = spans.find((s) => s.parentId === null);
    expect(root?.attributes[ATTR_AGENT_NAME]).toBe('RunnableSequence');
    const [transition] = new TraceToTransitions().transitions(spans);
    expect(transition).toMatchObject({
      agentName: 'RunnableSequence',
      action: { message: { role: 'assistant', content: 'It is sunny.' } },
    });
    expect(transition?.state.messages).toEqual([{ role: 'user', content: 'Weather?' }]);
  });
});

describe('fromLangChainResult', () => {
  it('prefers the raw body kept by __includeRawResponse (vLLM token ids), else reads usage and logprobs', () => {
    const raw = {
      id: 'r1',
      model: 'm',
      prompt_token_ids: [1, 2],
      choices: [{ message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop', token_ids: [7] }],
    };
    const withRaw = fromLangChainResult({
      generations: [
        [
          {
            text: 'hi',
            message: new AIMessage({ content: 'hi', additional_kwargs: { __raw_response: raw } }),
          } as never,
        ],
      ],
    });
    expect(withRaw).toMatchObject({ id: 'r1', promptTokenIds: [1, 2], responseTokenIds: [7] });
    const plain = fromLangChainResult({
      generations: [
        [
          {
            text: '',
            message: new AIMessage({
              content: '',
              id: 'r2',
              tool_calls: [{ id: 'c', name: 'f', args: { a: 1 } }],
              usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
              response_metadata: { finish_reason: 'tool_calls', logprobs: { content: [{ token: 'x', logprob: -1 }] } },
            }),
          } as never,
        ],
      ],
    });
    expect(plain).toMatchObject({ id: 'r2', inputTokens: 3, outputTokens: 4, logprobs: [{ token: 'x', logprob: -1 }] });
    expect(plain.choices[0]).toMatchObject({
      role: 'assistant',
      content: null,
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'c', name: 'f', arguments: '{"a":1}' }],
    });
  });
});
