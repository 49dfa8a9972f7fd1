import { describe, expect, it } from 'vitest';
import { chatAttrs, llmSpan, makeSpans, rewardAttrs } from './__fixtures__/span-builders';
import { GatewayTraceToTransitions } from './gateway-trace-to-transitions';

const vllm = (id: string, prompt: number[], response: number[]): Record<string, string> => ({
  'llm.hosted_vllm.id': id,
  'llm.hosted_vllm.prompt_token_ids': JSON.stringify(prompt),
  'llm.hosted_vllm.response_token_ids': JSON.stringify([response]),
});

describe('GatewayTraceToTransitions (checklist 40, LLM-proxy part)', () => {
  it('gives a reward at seq 6 to the call at seq 4, not seq 1', () => {
    const spans = makeSpans([
      { id: 's1', name: 'raw_gen_ai_request', start: 1, end: 2, seq: 1, attrs: vllm('req-1', [1, 2], [3]) },
      { id: 's4', name: 'raw_gen_ai_request', start: 3, end: 4, seq: 4, attrs: vllm('req-4', [4, 5], [6]) },
      { id: 'r6', name: 'agentlightning.annotation', start: 0.5, end: 0.5, seq: 6, attrs: rewardAttrs(0.7) },
    ]);
    const out = new GatewayTraceToTransitions().transitions(spans);
    expect(out.map((t) => [t.sequenceId, t.reward])).toEqual([
      [1, null],
      [4, 0.7],
    ]);
    expect(out[1]).toMatchObject({
      state: { tokenIds: [4, 5] },
      action: { tokenIds: [6] },
      responseId: 'req-4',
      done: true,
    });
  });

  it('orders by sequence id only and deduplicates request ids', () => {
    const spans = makeSpans([
      { id: 'b', name: 'raw_gen_ai_request', start: 1, end: 2, seq: 5, attrs: vllm('same', [9], [9]) },
      { id: 'a', name: 'raw_gen_ai_request', start: 9, end: 10, seq: 2, attrs: vllm('same', [1], [1]) },
    ]);
    const out = new GatewayTraceToTransitions().transitions(spans);
    expect(out.map((t) => t.spanIds[0])).toEqual(['a']);
  });

  it('ignores litellm_request spans without token ids, reads those with (literal strings too)', () => {
    const spans = makeSpans([
      { id: 'empty', name: 'litellm_request', start: 1, end: 2, seq: 1, attrs: { 'gen_ai.response.id': 'x' } },
      {
        id: 'full',
        name: 'litellm_request',
        start: 3,
        end: 4,
        seq: 2,
        attrs: { prompt_token_ids: '[1, 2]', response_token_ids: '(3, 4)', 'gen_ai.response.id': 'y' },
      },
    ]);
    const out = new GatewayTraceToTransitions().transitions(spans);
    expect(out.map((t) => [t.spanIds[0], t.state.tokenIds, t.action.tokenIds])).toEqual([['full', [1, 2], [3, 4]]]);
  });

  it('drops a reward whose sequence is not after any call', () => {
    const spans = makeSpans([
      { id: 'r', name: 'agentlightning.annotation', start: 1, end: 1, seq: 3, attrs: rewardAttrs(1) },
      { id: 'c', name: 'raw_gen_ai_request', start: 0, end: 0.5, seq: 3, attrs: vllm('c', [1], [2]) },
    ]);
    expect(new GatewayTraceToTransitions().transitions(spans).map((t) => t.reward)).toEqual([null]);
  });

  it('reads AGL gateway spans in the Contract 2 layout, with messages', () => {
    const spans = makeSpans([
      llmSpan(
        'g',
        1,
        chatAttrs({
          responseId: 'g1',
          promptTokenIds: [1],
          responseTokenIds: [2],
          extra: { 'agl.gateway': true },
        }),
        { seq: 1 },
      ),
      { id: 'r', name: 'agentlightning.annotation', start: 3, end: 3, seq: 2, attrs: rewardAttrs(0.25) },
    ]);
    const trajectory = new GatewayTraceToTransitions().adapt(spans, {
      rolloutId: 'ro-test',
      input: 'x',
      metadata: { task_id: 't-1' },
    });
    expect(trajectory.taskId).toBe('t-1');
    expect(trajectory.finalReward).toBe(0.25);
    expect(trajectory.transitions[0]).toMatchObject({
      reward: 0.25,
      state: { messages: [{ role: 'user', content: 'hi' }] },
    });
  });
});
