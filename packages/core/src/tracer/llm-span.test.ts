import { describe, expect, it } from 'vitest';
import { contentText, llmRequestAttributes, llmResponseAttributes } from './llm-span';

describe('the Contract 2 writer: details that were written two ways before the gateway shared it', () => {
  it('writes the prompt-cache reads next to the input tokens, and nothing when they are unknown', () => {
    const choices = [{ role: 'assistant', content: 'x' }];
    const attrs = llmResponseAttributes({ choices, inputTokens: 30, cachedInputTokens: 29 });
    expect(attrs['gen_ai.usage.input_tokens']).toBe(30);
    expect(attrs['gen_ai.usage.cache_read.input_tokens']).toBe(29);
    expect('gen_ai.usage.cache_read.input_tokens' in llmResponseAttributes({ choices, inputTokens: 3 })).toBe(false);
  });

  it("writes a message without content or tool calls as '' and leaves out empty token-id lists", () => {
    const attrs = llmResponseAttributes({
      choices: [{ role: 'assistant', content: null, finishReason: 'stop' }],
      promptTokenIds: [],
      responseTokenIds: [],
      logprobs: [],
    });
    expect(attrs['gen_ai.completion.0.content']).toBe('');
    expect(attrs.prompt_token_ids).toBeUndefined();
    expect(attrs.response_token_ids).toBeUndefined();
    expect(attrs['logprobs.content']).toBeUndefined();
  });

  it('prefers logprobs kept as JSON text over the parsed list', () => {
    const attrs = llmResponseAttributes({ choices: [], logprobs: [{ token: 'a' }], logprobsJson: '[{"token":"b"}]' });
    expect(attrs['logprobs.content']).toBe('[{"token":"b"}]');
  });

  it('adds to a map it is given (the request half) and returns that map', () => {
    const into: Record<string, unknown> = { mark: true };
    const out = llmRequestAttributes({ messages: [{ role: 'user', content: 'hi' }] }, into);
    expect(out).toBe(into);
    expect(llmResponseAttributes({ choices: [] }, out)).toBe(into);
    expect(into).toMatchObject({ mark: true, 'gen_ai.system': 'openai', 'gen_ai.prompt.0.content': 'hi' });
  });

  it('joins text parts only: a list with any other typed part stays JSON, so its parts can be found again', () => {
    expect(contentText([{ type: 'text', text: 'a' }, { type: 'input_text', text: 'b' }, 'c', { text: 'd' }])).toBe(
      'abcd',
    );
    const mixed = [
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'u' }, text: 'alt' },
    ];
    expect(contentText(mixed)).toBe(JSON.stringify(mixed));
    expect(contentText(null)).toBeNull();
  });
});
