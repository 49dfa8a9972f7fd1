import { type LlmResponse, llmResponseAttributes } from '@agl/core/llm-span';
import type { Attributes } from '@agl/core/schema';
import {
  ATTR_AGL_GATEWAY,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_LOGPROBS_CONTENT,
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_RESPONSE_TOKEN_IDS,
  completionKey,
  promptKey,
} from '@agl/core/semconv';
import { describe, expect, it } from 'vitest';
import type { CallKind, CallPlan } from '../upstream/call-plan';
import { callResponseOf } from './call-records';
import { callRequestAttributes } from './call-span';

/** The part of a plan the span's request half reads. */
const planOf = (kind: CallKind, body: Record<string, unknown>): CallPlan =>
  ({ kind, prepared: { body, asked: { tokenIds: true, logprobs: true, usage: true }, strip: false } }) as CallPlan;

/** A call's span attributes, both halves, as the gateway stores them. */
function callAttributes(kind: CallKind, request: Record<string, unknown>, answer: Record<string, unknown>): Attributes {
  return llmResponseAttributes(callResponseOf(kind, answer), callRequestAttributes(planOf(kind, request)));
}

const chatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const cacheRead = (kind: CallKind, answer: Record<string, unknown>) =>
  callAttributes(kind, chatRequest, answer)[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS];

describe("the backend's prompt-cache reads on the span", () => {
  it('takes them from Chat Completions, Responses and Anthropic usage, and leaves the attribute out when not reported', () => {
    const chat = {
      id: 'c',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 30, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 29 } },
    };
    expect(cacheRead('chat', chat)).toBe(29);
    expect(callAttributes('chat', chatRequest, chat)[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(30);
    const responses = {
      id: 'r',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] }],
      usage: { input_tokens: 40, output_tokens: 2, input_tokens_details: { cached_tokens: 32 } },
    };
    expect(cacheRead('responses', responses)).toBe(32);
    const anthropic = {
      id: 'msg_1',
      content: [{ type: 'text', text: 'hello' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, output_tokens: 2, cache_read_input_tokens: 8, cache_creation_input_tokens: 5 },
    };
    expect(cacheRead('anthropic-passthrough', anthropic)).toBe(8);
    // Anthropic counts cached tokens apart from input_tokens; the span's input tokens include them, as for OpenAI.
    expect(callAttributes('anthropic-passthrough', chatRequest, anthropic)[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(25);
    expect(
      cacheRead('chat', { id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }),
    ).toBeUndefined();
  });
});

describe("the gateway's span is written by core's writer (the layout a Python AGL 0.3 reader expects)", () => {
  it("marks the span as the gateway's and names the API the client spoke", () => {
    const attrs = callAttributes('anthropic-passthrough', { model: 'm', messages: [] }, { content: [] });
    expect(attrs[ATTR_AGL_GATEWAY]).toBe(true);
    expect(attrs[ATTR_GEN_AI_SYSTEM]).toBe('anthropic');
  });

  it("writes '' for a message with neither content nor tool calls, and leaves content out beside tool calls", () => {
    const attrs = callAttributes(
      'chat',
      {
        model: 'm',
        messages: [
          { role: 'user' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' } }] },
        ],
      },
      { id: 'c', choices: [{ message: { role: 'assistant', content: null }, finish_reason: 'stop' }] },
    );
    expect(attrs[promptKey(0, 'content')]).toBe('');
    expect(attrs[promptKey(1, 'content')]).toBeUndefined();
    expect(attrs[completionKey(0, 'content')]).toBe('');
  });

  it('leaves out empty token-id and logprobs lists (no ids known), and keeps non-empty ones', () => {
    const answer = (ids: number[], logprobs: unknown[]) => ({
      id: 'c',
      prompt_token_ids: ids,
      choices: [{ message: { role: 'assistant', content: 'x' }, token_ids: ids, logprobs: { content: logprobs } }],
    });
    const empty = callAttributes('chat', chatRequest, answer([], []));
    expect(empty[ATTR_PROMPT_TOKEN_IDS]).toBeUndefined();
    expect(empty[ATTR_RESPONSE_TOKEN_IDS]).toBeUndefined();
    expect(empty[ATTR_LOGPROBS_CONTENT]).toBeUndefined();
    const full = callAttributes('chat', chatRequest, answer([1, 2], [{ token: 'x', logprob: -1 }]));
    expect(full[ATTR_PROMPT_TOKEN_IDS]).toEqual([1, 2]);
    expect(full[ATTR_RESPONSE_TOKEN_IDS]).toEqual([1, 2]);
    expect(full[ATTR_LOGPROBS_CONTENT]).toBe('[{"token":"x","logprob":-1}]');
  });

  it("writes the backend's logprobs text as is when it was kept unparsed, unless the list is empty", () => {
    const response: LlmResponse = { choices: [{ role: 'assistant', content: 'x' }], logprobsJson: '[{"token":"x"}]' };
    expect(llmResponseAttributes(response)[ATTR_LOGPROBS_CONTENT]).toBe('[{"token":"x"}]');
    expect(llmResponseAttributes({ ...response, logprobsJson: ' [ ] ' })[ATTR_LOGPROBS_CONTENT]).toBeUndefined();
  });
});
