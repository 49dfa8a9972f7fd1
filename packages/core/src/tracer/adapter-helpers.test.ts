import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TraceToTransitions } from '../transitions/index';
import { Span } from '../schema/index';
import { UserError } from '../errors/index';
import type { LightningStore } from '../store/index';
import { installProcessRolloutFromEnv } from './process-rollout-env';
import { getRolloutContext, setProcessRolloutContext } from './rollout-context';
import { agentSpanAttributes, llmRequestAttributes, llmResponseAttributes, toolSpanAttributes } from './llm-span';
import {
  fromOpenAiChatResponse,
  fromOpenAiResponsesRequest,
  fromOpenAiResponsesResponse,
  fromResponsesItems,
} from './openai-payload';

describe('Contract 2 writers', () => {
  it('flattens prompt, tool calls, functions, usage, token ids and logprobs', () => {
    const req = llmRequestAttributes({
      model: 'm',
      temperature: 0.5,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', content: 'ok', toolCallId: 'c1' },
      ],
      tools: [{ name: 'f', description: 'd', parameters: { type: 'object' } }],
    });
    expect(req).toMatchObject({
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'm',
      'gen_ai.prompt.0.content': 'hi',
      'gen_ai.prompt.1.tool_calls.0.name': 'f',
      'gen_ai.prompt.2.tool_call_id': 'c1',
      'gen_ai.request.functions.0.parameters': '{"type":"object"}',
    });
    expect(req['gen_ai.prompt.1.content']).toBeUndefined();
    const res = llmResponseAttributes(
      fromOpenAiChatResponse({
        id: 'r1',
        model: 'm',
        prompt_token_ids: [1, 2],
        usage: { prompt_tokens: 2, completion_tokens: 1 },
        choices: [
          {
            message: { role: 'assistant', content: 'x' },
            finish_reason: 'stop',
            token_ids: [3],
            logprobs: { content: [{ token: 'x', logprob: -0.1 }] },
          },
        ],
      }),
    );
    expect(res).toMatchObject({
      'gen_ai.response.id': 'r1',
      'gen_ai.completion.0.content': 'x',
      'gen_ai.completion.0.finish_reason': 'stop',
      'gen_ai.usage.input_tokens': 2,
      prompt_token_ids: [1, 2],
      response_token_ids: [3],
      'logprobs.content': '[{"token":"x","logprob":-0.1}]',
    });
    expect(agentSpanAttributes('a')).toEqual({ 'agent.name': 'a', 'gen_ai.agent.name': 'a' });
    expect(toolSpanAttributes({ name: 't', parameters: { x: 1 }, callId: 'c' })).toMatchObject({
      'tool.parameters': '{"x":1}',
      'tool.call.id': 'c',
    });
  });

  it('normalises Responses API items, snake_case and the Agents SDK camelCase form', () => {
    const items = [
      { role: 'user', content: 'q' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call', callId: 'c2', name: 'g', arguments: '{}' },
      { type: 'function_call_result', callId: 'c1', output: { type: 'text', text: 'r1' } },
      { type: 'function_call_output', call_id: 'c2', output: 'r2' },
    ];
    expect(fromResponsesItems(items, 'sys')).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'c1', name: 'f', arguments: '{}' },
          { id: 'c2', name: 'g', arguments: '{}' },
        ],
      },
      { role: 'tool', content: 'r1', toolCallId: 'c1' },
      { role: 'tool', content: 'r2', toolCallId: 'c2' },
    ]);
    expect(
      fromOpenAiResponsesRequest({ model: 'm', input: 'hello', tools: [{ type: 'function', name: 'f' }] }).tools,
    ).toEqual([{ name: 'f' }]);
    const out = fromOpenAiResponsesResponse({
      id: 'r',
      output: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{"a":1}' }],
      usage: { input_tokens: 3, output_tokens: 4 },
    });
    expect(out.choices[0]).toMatchObject({
      role: 'assistant',
      content: null,
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'c', name: 'f' }],
    });
    expect(out.inputTokens).toBe(3);
  });
});

describe('recorded adapter span fixtures', () => {
  const root = fileURLToPath(new URL('../transitions/__fixtures__/', import.meta.url));
  const files = ['openai', 'langchain', 'vercel-ai', 'openai-agents'].flatMap((fw) =>
    readdirSync(`${root}${fw}`).map((file) => `${fw}/${file}`),
  );
  it.each(files)('%s converts to the two weather transitions', (file) => {
    const spans = (JSON.parse(readFileSync(`${root}${file}`, 'utf8')) as unknown[]).map((s) => Span.parse(s));
    const transitions = new TraceToTransitions().transitions(spans);
    expect(transitions).toHaveLength(2);
    expect(transitions[0]?.action.message.toolCalls?.[0]).toMatchObject({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
    expect(transitions[1]?.state.messages.at(-1)).toMatchObject({ role: 'tool', content: 'sunny in Paris' });
    expect(transitions[1]?.action.message.content).toBe('It is sunny in Paris.');
    expect(transitions[1]?.done).toBe(true);
  });
});

describe("installProcessRolloutFromEnv (the preloads' start)", () => {
  it('makes the env rollout the process-wide owner, and refuses a partial set of variables', async () => {
    const store = {} as LightningStore;
    const seen: unknown[] = [];
    const createStore = (options: { url: string; token?: string }): LightningStore => {
      seen.push(options);
      return store;
    };
    try {
      expect(await installProcessRolloutFromEnv({ createStore, env: {} })).toBeUndefined();
      expect(getRolloutContext()).toBeUndefined();
      const env = { AGL_ROLLOUT_ID: 'ro-1', AGL_ATTEMPT_ID: 'at-1', AGL_STORE_URL: 'http://127.0.0.1:1', AGL_KEY: 'k' };
      const ctx = await installProcessRolloutFromEnv({ createStore, env });
      expect(ctx).toMatchObject({ rolloutId: 'ro-1', attemptId: 'at-1', store });
      expect(getRolloutContext()?.rolloutId).toBe('ro-1');
      expect(seen).toEqual([{ url: 'http://127.0.0.1:1', token: 'k' }]);
      await expect(installProcessRolloutFromEnv({ createStore, env: { AGL_ROLLOUT_ID: 'ro-1' } })).rejects.toThrow(
        UserError,
      );
    } finally {
      setProcessRolloutContext(undefined);
    }
  });
});
