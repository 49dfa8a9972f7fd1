import { ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, ATTR_GEN_AI_USAGE_INPUT_TOKENS } from '@agl/core/semconv';
import { describe, expect, it } from 'vitest';
import { anthropicResponseToCanonical } from '../translation/anthropic-translation';
import {
  addResponseAttributes,
  type CanonicalRequest,
  type CanonicalResponse,
  requestAttributes,
} from './canonical-call';
import { chatRequestToCanonical, chatResponseToCanonical, responsesResponseToCanonical } from './openai-canonical';

/** A call's span attributes, both halves. */
const callAttributes = (request: CanonicalRequest, response: CanonicalResponse, system: string) =>
  addResponseAttributes(requestAttributes(request, system), response);

const request = chatRequestToCanonical({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
const cacheRead = (response: ReturnType<typeof chatResponseToCanonical>) =>
  callAttributes(request, response, 'openai')[ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS];

describe("the backend's prompt-cache reads on the span", () => {
  it('takes them from Chat Completions, Responses and Anthropic usage, and leaves the attribute out when not reported', () => {
    const chat = chatResponseToCanonical({
      id: 'c',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 30, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 29 } },
    });
    expect(cacheRead(chat)).toBe(29);
    expect(callAttributes(request, chat, 'openai')[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(30);
    const responses = responsesResponseToCanonical({
      id: 'r',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] }],
      usage: { input_tokens: 40, output_tokens: 2, input_tokens_details: { cached_tokens: 32 } },
    });
    expect(cacheRead(responses)).toBe(32);
    const anthropic = anthropicResponseToCanonical({
      id: 'msg_1',
      content: [{ type: 'text', text: 'hello' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, output_tokens: 2, cache_read_input_tokens: 8, cache_creation_input_tokens: 5 },
    });
    expect(cacheRead(anthropic)).toBe(8);
    // Anthropic counts cached tokens apart from input_tokens; the span's input tokens include them, as for OpenAI.
    expect(callAttributes(request, anthropic, 'anthropic')[ATTR_GEN_AI_USAGE_INPUT_TOKENS]).toBe(25);
    const plain = chatResponseToCanonical({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } });
    expect(cacheRead(plain)).toBeUndefined();
  });
});
