import { GatewayTraceToTransitions } from '@agl/core/transitions';
import { MemoryStore } from '@agl/store';
import { toyChatPromptIds, toyTokenize } from '@agl/testing';
import Anthropic from '@anthropic-ai/sdk';
import { expect, it } from 'vitest';
import { BACKEND_KEY, describeSpanWriteModes, lastBackendBody, spansOf } from '../__fixtures__/gateway-fixture';
import { startScriptedBackend } from '../__fixtures__/scripted-backend';
import { startGateway } from '../index';

const weatherTool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object' as const, properties: { input: { type: 'string' } } },
};

describeSpanWriteModes('gateway with the @anthropic-ai/sdk client (spanWrite %s)', (fx) => {
  const anthropicFor = (rolloutId: string, attemptId: string): Anthropic =>
    new Anthropic({
      baseURL: `${fx().gateway.url}/rollout/${rolloutId}/attempt/${attemptId}`,
      apiKey: 'client-anthropic-key',
      maxRetries: 0,
    });

  it('translates training calls to chat/completions (tools, tool results) and records the backend token ids', async () => {
    const client = anthropicFor(fx().rollout.rolloutId, fx().rollout.attempt.attemptId);
    const first = await client.messages.create({
      model: 'claude-x',
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Paris' }],
      tools: [weatherTool],
    });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((b) => b.type === 'tool_use')!;
    expect(toolUse.type === 'tool_use' && toolUse.input).toEqual({ input: 'Paris' });
    const sent = fx().llm.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${BACKEND_KEY}`);
    expect(sent.headers['x-api-key']).toBeUndefined();
    expect(sent.body).toMatchObject({
      max_tokens: 64,
      return_token_ids: true,
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
    });

    const second = await client.messages.create({
      model: 'claude-x',
      max_tokens: 64,
      system: 'Be brief.',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Paris' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: toolUse.type === 'tool_use' ? toolUse.id : '', content: '5 * 5' },
          ],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: '25' }]);
    expect(second.stop_reason).toBe('end_turn');
    expect(second.usage.output_tokens).toBe(1);
    expect(lastBackendBody(fx().llm).messages).toMatchObject([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Paris' },
      { role: 'assistant', tool_calls: [{ function: { name: 'get_weather', arguments: '{"input":"Paris"}' } }] },
      { role: 'tool', content: '5 * 5' },
    ]);

    const spans = await spansOf(fx().store, fx().rollout.rolloutId);
    expect(spans.map((s) => s.attributes['gen_ai.system'])).toEqual(['anthropic', 'anthropic']);
    const transitions = new GatewayTraceToTransitions().transitions(spans);
    expect(transitions[0]!.state.tokenIds).toEqual(
      toyChatPromptIds([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Paris' },
      ]),
    );
    expect(transitions[0]!.action.tokenIds).toEqual(toyTokenize('<tool_call>get_weather{"input":"Paris"}</tool_call>'));
    expect(transitions[1]!.action.tokenIds).toEqual(toyTokenize('25'));
    expect(transitions[1]!.action.message.content).toBe('25');
  });

  it('streams translated calls as Anthropic events (text and tool_use blocks)', async () => {
    const r = await fx().store.startRollout({ input: null, mode: 'train' });
    const client = anthropicFor(r.rolloutId, r.attempt.attemptId);
    const textStream = client.messages.stream({
      model: 'claude-x',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'say hello there friend' }],
    });
    const deltas: string[] = [];
    textStream.on('text', (t) => deltas.push(t));
    const message = await textStream.finalMessage();
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Echo: say hello there friend' });
    expect(deltas.length).toBeGreaterThan(3);
    expect(message.stop_reason).toBe('end_turn');

    const toolStream = client.messages.stream({
      model: 'claude-x',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Rome' }],
      tools: [weatherTool],
    });
    const toolMessage = await toolStream.finalMessage();
    expect(toolMessage.stop_reason).toBe('tool_use');
    const block = toolMessage.content.find((b) => b.type === 'tool_use');
    expect(block?.type === 'tool_use' && block.input).toEqual({ input: 'Rome' });

    const spans = await spansOf(fx().store, r.rolloutId);
    expect(spans).toHaveLength(2);
    expect(spans[0]!.attributes).toMatchObject({
      'gen_ai.completion.0.content': 'Echo: say hello there friend',
      response_token_ids: toyTokenize('Echo: say hello there friend'),
    });
    expect(spans[1]!.attributes).toMatchObject({
      'gen_ai.completion.0.tool_calls.0.name': 'get_weather',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"input":"Rome"}',
    });
  });

  it('passes non-training calls through to a backend that speaks Anthropic, streaming and not', async () => {
    const r = await fx().store.startRollout({ input: null, mode: 'val' });
    const client = anthropicFor(r.rolloutId, r.attempt.attemptId);
    const plain = await client.messages.create({
      model: 'claude-x',
      max_tokens: 32,
      messages: [{ role: 'user', content: '9 - 2' }],
    });
    expect(plain.content).toEqual([{ type: 'text', text: '7' }]);
    const sent = fx().llm.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(BACKEND_KEY);
    expect(sent.headers['anthropic-version']).toBeDefined();

    const streamed = await client.messages
      .stream({
        model: 'claude-x',
        max_tokens: 32,
        messages: [{ role: 'user', content: 'Oslo' }],
        tools: [weatherTool],
      })
      .finalMessage();
    const block = streamed.content.find((b) => b.type === 'tool_use');
    expect(block?.type === 'tool_use' && block.input).toEqual({ input: 'Oslo' });
    expect(fx().llm.requests.at(-1)!.path).toBe('/v1/messages');

    const spans = await spansOf(fx().store, r.rolloutId);
    expect(
      spans.map(
        (s) => s.attributes['gen_ai.completion.0.content'] ?? s.attributes['gen_ai.completion.0.tool_calls.0.name'],
      ),
    ).toEqual(['7', 'get_weather']);
    expect(spans[0]!.attributes['gen_ai.usage.output_tokens']).toBe(1);
  });

  it('falls back to translation, and remembers it, when the backend has no /messages route', async () => {
    const paths: string[] = [];
    const backend = await startScriptedBackend((req, res) => {
      paths.push(req.url ?? '');
      if (req.url?.endsWith('/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
        return;
      }
      const body = {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'open-model',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi from chat' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 3 },
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    const store = new MemoryStore();
    const gateway = await startGateway({ store, backend: backend.baseURL, port: 0 });
    try {
      const client = new Anthropic({ baseURL: gateway.url, apiKey: 'x', maxRetries: 0 });
      for (let i = 0; i < 2; i += 1) {
        const msg = await client.messages.create({
          model: 'claude-x',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hello' }],
        });
        expect(msg.content).toEqual([{ type: 'text', text: 'hi from chat' }]);
        expect(msg.usage).toMatchObject({ input_tokens: 3, output_tokens: 3 });
      }
      expect(paths).toEqual(['/v1/messages', '/v1/chat/completions', '/v1/chat/completions']);
    } finally {
      await gateway.close();
      await backend.close();
      await store.close();
    }
  });
});
