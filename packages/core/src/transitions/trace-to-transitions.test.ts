import { describe, expect, it } from 'vitest';
import { chatAttrs, llmSpan, makeSpans, rewardAttrs } from './__fixtures__/span-builders';
import { TraceToTransitions } from './trace-to-transitions';

const LLM = 'openai.chat.completion';
const REWARD = 'agentlightning.annotation';

describe('TraceToTransitions: repair and agent filter (checklist 37)', () => {
  const spans = makeSpans([
    { id: 'root', name: 'session', start: 0, end: 10 },
    { id: 'agent', parent: 'root', name: 'agent.run', start: 1, end: 9, attrs: { 'agent.name': 'planner' } },
    { id: 'llm', parent: 'root', name: LLM, start: 2, end: 3, attrs: chatAttrs({ responseId: 'r1' }) },
    { id: 'rw', parent: 'agent', name: REWARD, start: 4, end: 4, attrs: rewardAttrs(0.3) },
  ]);

  it('repairs the LLM span under the agent and yields one planner transition with reward 0.3', () => {
    const out = new TraceToTransitions({ agentMatch: 'planner', finalRewardOnLastCall: false }).transitions(spans);
    expect(out).toHaveLength(1);
    expect(out[0]?.agentName).toBe('planner');
    expect(out[0]?.reward).toBe(0.3);
    expect(out[0]?.state.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(out[0]?.action.message).toMatchObject({ role: 'assistant', content: 'hello' });
    expect(out[0]?.done).toBe(true);
    expect(out[0]?.spanIds).toEqual(['llm']);
  });

  it('yields nothing without repair, since the call is outside the agent', () => {
    expect(new TraceToTransitions({ agentMatch: 'planner', repairHierarchy: false }).transitions(spans)).toEqual([]);
  });

  it('agentMatch: a string must equal the name, a RegExp is searched', () => {
    expect(new TraceToTransitions({ agentMatch: 'plan' }).transitions(spans)).toHaveLength(0);
    expect(new TraceToTransitions({ agentMatch: /plan/ }).transitions(spans)).toHaveLength(1);
    const all = new TraceToTransitions().transitions(spans);
    expect(all[0]?.agentName).toBe('planner');
  });
});

describe('TraceToTransitions: dedup and rewards (checklist 38)', () => {
  it('keeps only the first of two LLM spans with the same response id', () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      llmSpan('a', 1, chatAttrs({ responseId: 'same', completion: 'A' }), { parent: 'root' }),
      llmSpan('b', 3, chatAttrs({ responseId: 'same', completion: 'B' }), { parent: 'root' }),
    ]);
    const out = new TraceToTransitions().transitions(spans);
    expect(out.map((t) => t.spanIds[0])).toEqual(['a']);
  });

  it('skips spans with empty token ids when skipEmptyTokenSpans is set', () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      llmSpan('a', 1, chatAttrs({ responseId: 'r1', promptTokenIds: [1, 2], responseTokenIds: [3] }), {
        parent: 'root',
      }),
      { id: 'b', parent: 'root', name: LLM, start: 3, end: 4, attrs: chatAttrs({ responseId: 'r2' }) },
    ]);
    expect(new TraceToTransitions().transitions(spans)).toHaveLength(2);
    const kept = new TraceToTransitions({ skipEmptyTokenSpans: true }).transitions(spans);
    expect(kept.map((t) => t.spanIds[0])).toEqual(['a']);
    expect(kept[0]?.state.tokenIds).toEqual([1, 2]);
    expect(kept[0]?.action.tokenIds).toEqual([3]);
  });

  it('assigns a reward to the call it follows (first_occurrence), and the final reward to the last call', () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      { id: 'c1', parent: 'root', name: LLM, start: 1, end: 2, attrs: chatAttrs({ responseId: 'r1' }) },
      { id: 'rw', parent: 'root', name: REWARD, start: 2.5, end: 2.5, attrs: rewardAttrs(0.5) },
      { id: 'c2', parent: 'root', name: LLM, start: 3, end: 4, attrs: chatAttrs({ responseId: 'r2' }) },
      { id: 'c3', parent: 'root', name: LLM, start: 5, end: 6, attrs: chatAttrs({ responseId: 'r3' }) },
      { id: 'final', parent: 'root', name: REWARD, start: 7, end: 7, attrs: rewardAttrs(1.0) },
    ]);
    const agl = new TraceToTransitions({ finalRewardOnLastCall: false }).transitions(spans);
    expect(agl.map((t) => t.reward)).toEqual([0.5, null, 1.0]);
    const contract = new TraceToTransitions().transitions(spans);
    expect(contract.map((t) => t.reward)).toEqual([0.5, null, 1.0]);
    expect(contract.map((t) => t.done)).toEqual([false, false, true]);
  });

  it('final reward overrides the last call even when an intermediate reward already took it', () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      { id: 'c1', parent: 'root', name: LLM, start: 1, end: 2, attrs: chatAttrs({ responseId: 'r1' }) },
      { id: 'c2', parent: 'root', name: LLM, start: 3, end: 4, attrs: chatAttrs({ responseId: 'r2' }) },
      { id: 'mid', parent: 'root', name: REWARD, start: 5, end: 5, attrs: rewardAttrs(0.2) },
      { id: 'final', parent: 'root', name: REWARD, start: 6, end: 6, attrs: rewardAttrs(1.0) },
    ]);
    // AGL 0.3: 0.2 → c2, then 1.0 walks back to c1.
    expect(new TraceToTransitions({ finalRewardOnLastCall: false }).transitions(spans).map((t) => t.reward)).toEqual([
      1.0, 0.2,
    ]);
    // Contract 3: the final reward sits on the last call.
    expect(new TraceToTransitions().transitions(spans).map((t) => t.reward)).toEqual([null, 1.0]);
    const trajectory = new TraceToTransitions().adapt(spans, { rolloutId: 'ro-test', input: { q: 1 }, mode: 'train' });
    expect(trajectory.finalReward).toBe(1.0);
    expect(trajectory.mode).toBe('train');
    expect(trajectory.taskId).toMatch(/^task-[0-9a-f]{16}$/);
  });

  it('matches the same response id under two different agents once', () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      { id: 'A', parent: 'root', name: 'agent', start: 1, end: 4, attrs: { 'agent.name': 'alpha' } },
      { id: 'a1', parent: 'A', name: LLM, start: 2, end: 3, attrs: chatAttrs({ responseId: 'dup' }) },
      { id: 'B', parent: 'root', name: 'agent', start: 5, end: 9, attrs: { 'agent.name': 'beta' } },
      { id: 'b1', parent: 'B', name: LLM, start: 6, end: 7, attrs: chatAttrs({ responseId: 'dup' }) },
    ]);
    const out = new TraceToTransitions().transitions(spans);
    expect(out).toHaveLength(1);
    expect(out[0]?.agentName).toBe('alpha');
  });

  it('ignores LLM calls inside a reward operation (judge calls) unless told otherwise', () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      { id: 'c1', parent: 'root', name: LLM, start: 1, end: 2, attrs: chatAttrs({ responseId: 'r1' }) },
      {
        id: 'judge',
        parent: 'root',
        name: 'agentlightning.operation',
        start: 3,
        end: 6,
        attrs: { 'agentlightning.operation.name': 'agentlightning.reward' },
      },
      { id: 'j1', parent: 'judge', name: LLM, start: 4, end: 5, attrs: chatAttrs({ responseId: 'rj' }) },
    ]);
    expect(new TraceToTransitions().transitions(spans).map((t) => t.spanIds[0])).toEqual(['c1']);
    expect(
      new TraceToTransitions({ excludeLlmCallInReward: false }).transitions(spans).map((t) => t.spanIds[0]),
    ).toEqual(['c1', 'j1']);
  });
});

describe('TraceToTransitions: first_sibling (checklist 39)', () => {
  it("gives a reward under agent A to A's earlier LLM child, not to sibling agent B's call", () => {
    const spans = makeSpans([
      { id: 'root', name: 'root', start: 0, end: 10 },
      { id: 'A', parent: 'root', name: 'agent', start: 1, end: 5, attrs: { 'agent.name': 'A' } },
      { id: 'a1', parent: 'A', name: LLM, start: 2, end: 3, attrs: chatAttrs({ responseId: 'ra' }) },
      { id: 'rw', parent: 'A', name: REWARD, start: 4, end: 4, attrs: rewardAttrs(0.8) },
      { id: 'B', parent: 'root', name: 'agent', start: 1, end: 9, attrs: { 'agent.name': 'B' } },
      { id: 'b1', parent: 'B', name: LLM, start: 2.5, end: 3.5, attrs: chatAttrs({ responseId: 'rb' }) },
    ]);
    const out = new TraceToTransitions({
      rewardMatch: 'first_sibling',
      repairHierarchy: false,
      finalRewardOnLastCall: false,
    }).transitions(spans);
    expect(out.map((t) => [t.agentName, t.reward])).toEqual([
      ['A', 0.8],
      ['B', null],
    ]);
    // first_occurrence would hand it to B's call, the latest one that ended before the reward.
    const occurrence = new TraceToTransitions({ repairHierarchy: false, finalRewardOnLastCall: false }).transitions(
      spans,
    );
    expect(occurrence.map((t) => t.reward)).toEqual([null, 0.8]);
  });
});

describe('TraceToTransitions: gateway and adapter spans of one call (Contract 2)', () => {
  const adapterAttrs = chatAttrs({ responseId: 'chatcmpl-1', prompt: 'q', completion: 'a' });
  const gatewayAttrs = chatAttrs({
    responseId: 'chatcmpl-1',
    prompt: 'q',
    completion: 'a',
    promptTokenIds: [10, 11],
    responseTokenIds: [12],
    extra: {
      'agl.gateway': true,
      'logprobs.content': JSON.stringify([{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [] }]),
    },
  });

  it('counts the call once, with the gateway tokens and the adapter agent (gateway as a separate root)', () => {
    const spans = makeSpans([
      { id: 'gw', name: LLM, start: 2.1, end: 2.9, attrs: gatewayAttrs },
      { id: 'agent', name: 'agent', start: 1, end: 9, attrs: { 'agent.name': 'solver' } },
      { id: 'llm', parent: 'agent', name: LLM, start: 2, end: 3, attrs: adapterAttrs },
      { id: 'rw', parent: 'agent', name: REWARD, start: 4, end: 4, attrs: rewardAttrs(1) },
    ]);
    const out = new TraceToTransitions({ repairHierarchy: false }).transitions(spans);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      agentName: 'solver',
      state: { tokenIds: [10, 11] },
      action: { tokenIds: [12], logprobs: [{ token: 'a', logprob: -0.1 }] },
      spanIds: ['llm', 'gw'],
      reward: 1,
      responseId: 'chatcmpl-1',
    });
  });

  it('also when the gateway span is a child of the adapter span (traceparent joined)', () => {
    const spans = makeSpans([
      { id: 'agent', name: 'agent', start: 1, end: 9, attrs: { 'agent.name': 'solver' } },
      { id: 'llm', parent: 'agent', name: LLM, start: 2, end: 3, attrs: adapterAttrs },
      { id: 'gw', parent: 'llm', name: LLM, start: 2.1, end: 2.9, attrs: gatewayAttrs },
    ]);
    const out = new TraceToTransitions({ agentMatch: 'solver' }).transitions(spans);
    expect(out.map((t) => t.spanIds)).toEqual([['llm', 'gw']]);
    expect(out[0]?.state.tokenIds).toEqual([10, 11]);
  });

  it('uses a lone gateway span as the call when no adapter span exists', () => {
    const spans = makeSpans([{ id: 'gw', name: LLM, start: 2, end: 3, attrs: gatewayAttrs }]);
    const out = new TraceToTransitions().transitions(spans);
    expect(out).toHaveLength(1);
    expect(out[0]?.agentName).toBeNull();
    expect(out[0]?.action.tokenIds).toEqual([12]);
  });
});

describe('TraceToTransitions: other LLM-call forms are normalised on read', () => {
  it('reads GenAI semconv JSON messages on a `chat <model>` span', () => {
    const spans = makeSpans([
      {
        id: 'agent',
        name: 'invoke_agent helper',
        start: 0,
        end: 10,
        attrs: { 'gen_ai.agent.name': 'helper', 'gen_ai.operation.name': 'invoke_agent' },
      },
      {
        id: 'chat',
        parent: 'agent',
        name: 'chat qwen',
        start: 1,
        end: 2,
        attrs: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'qwen',
          'gen_ai.response.id': 'resp-9',
          'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'be brief' }]),
          'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'weather?' }] }]),
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } }],
              finish_reason: 'tool_call',
            },
          ]),
        },
      },
    ]);
    const out = new TraceToTransitions({ agentMatch: 'helper' }).transitions(spans);
    expect(out).toHaveLength(1);
    expect(out[0]?.state.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
    ]);
    expect(out[0]?.action.message).toMatchObject({
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
    });
  });

  it('reads OpenInference LLM spans whatever their name', () => {
    const spans = makeSpans([
      {
        id: 'oi',
        name: 'ChatOpenAI',
        start: 1,
        end: 2,
        attrs: {
          'openinference.span.kind': 'LLM',
          'llm.model_name': 'gpt-x',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'hi',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': 'yo',
        },
      },
    ]);
    const out = new TraceToTransitions().transitions(spans);
    expect(out[0]?.state.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(out[0]?.action.message).toEqual({ role: 'assistant', content: 'yo' });
  });

  it('a custom llmCallMatch replaces the default', () => {
    const spans = makeSpans([{ id: 'x', name: 'my.llm', start: 1, end: 2, attrs: chatAttrs({ responseId: 'r' }) }]);
    expect(new TraceToTransitions().transitions(spans)).toHaveLength(0);
    expect(new TraceToTransitions({ llmCallMatch: /^my\.llm$/ }).transitions(spans)).toHaveLength(1);
  });
});
