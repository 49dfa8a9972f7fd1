import { describe, expect, it } from 'vitest';
import * as semconv from './semconv';

describe('semconv: AGL 0.3 names (reference §4.6) and the Contract 2 layout', () => {
  it('has the AGL 0.3 span names', () => {
    expect(semconv.AGL_SPAN_NAMES).toEqual({
      annotation: 'agentlightning.annotation',
      message: 'agentlightning.message',
      object: 'agentlightning.object',
      exception: 'agentlightning.exception',
      operation: 'agentlightning.operation',
      reward: 'agentlightning.reward',
      virtual: 'agentlightning.virtual',
    });
  });

  it('has the resource and span attribute names', () => {
    expect([
      semconv.ATTR_ROLLOUT_ID,
      semconv.ATTR_ATTEMPT_ID,
      semconv.ATTR_SPAN_SEQUENCE_ID,
      semconv.ATTR_TRACER_NAME,
    ]).toEqual([
      'agentlightning.rollout_id',
      'agentlightning.attempt_id',
      'agentlightning.span_sequence_id',
      'agentlightning.tracer.name',
    ]);
    expect(semconv.rewardValueKey(1)).toBe('agentlightning.reward.1.value');
    expect(semconv.makeTagAttributes(['a', 'b'])).toEqual({ 'agentlightning.tag.0': 'a', 'agentlightning.tag.1': 'b' });
    expect(semconv.makeLinkAttributes({ 'gen_ai.response.id': 'r' })).toEqual({
      'agentlightning.link.0.key_match': 'gen_ai.response.id',
      'agentlightning.link.0.value_match': 'r',
    });
  });

  it('has the Contract 2 LLM-call layout', () => {
    expect(semconv.SPAN_CHAT_COMPLETION).toBe('openai.chat.completion');
    expect(semconv.SPAN_COMPLETION).toBe('openai.completion');
    expect(semconv.promptKey(0, 'tool_call_id')).toBe('gen_ai.prompt.0.tool_call_id');
    expect(semconv.completionKey(1, 'finish_reason')).toBe('gen_ai.completion.1.finish_reason');
    expect(semconv.completionToolCallKey(0, 2, 'arguments')).toBe('gen_ai.completion.0.tool_calls.2.arguments');
    expect(semconv.requestFunctionKey(3, 'parameters')).toBe('gen_ai.request.functions.3.parameters');
    expect([semconv.ATTR_PROMPT_TOKEN_IDS, semconv.ATTR_RESPONSE_TOKEN_IDS, semconv.ATTR_LOGPROBS_CONTENT]).toEqual([
      'prompt_token_ids',
      'response_token_ids',
      'logprobs.content',
    ]);
    expect([
      semconv.ATTR_TOOL_NAME,
      semconv.ATTR_TOOL_PARAMETERS,
      semconv.ATTR_TOOL_CALL_ID,
      semconv.ATTR_TOOL_CALL_TYPE,
    ]).toEqual(['tool.name', 'tool.parameters', 'tool.call.id', 'tool.call.type']);
    expect([semconv.ATTR_AGENT_NAME, semconv.ATTR_GEN_AI_AGENT_NAME]).toEqual(['agent.name', 'gen_ai.agent.name']);
    expect(semconv.DEFAULT_LLM_CALL_MATCH.test('openai.chat.completion')).toBe(true);
  });

  it('every exported string constant is unique within its kind', () => {
    const names = Object.entries(semconv).filter(([k, v]) => k.startsWith('ATTR_') && typeof v === 'string');
    const values = names.map(([, v]) => v);
    // ATTR_TOOL ('tool') is a prefix and ATTR_OPERATION_NAME_PLAIN differs from ATTR_OPERATION_NAME, so all differ.
    expect(new Set(values).size).toBe(values.length);
  });
});
