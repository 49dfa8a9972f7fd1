import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { renderChat } from '../chat/chat-template';
import type { GeneratedToken } from '../model/sequence';
import type { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { ChoiceBuilder, type ChoiceEnd } from './choice-builder';
import { parseChatRequest } from './request-parse';
import type { TinyModelHost } from './tiny-model-host';

/** OpenAI chat logprobs entries for tokens. */
export function chatLogprobs(tok: TinyTokenizer, tokens: readonly GeneratedToken[]): Array<Record<string, unknown>> {
  const entry = (id: number, logprob: number) => ({
    token: tok.tokenText(id),
    logprob,
    bytes: Array.from(tok.tokenBytes(id)),
  });
  return tokens.map((t) => ({ ...entry(t.id, t.logprob), top_logprobs: t.top.map(([id, lp]) => entry(id, lp)) }));
}

function toolCallsWire(end: ChoiceEnd, prefix: string) {
  return end.toolCalls.map((c, i) => ({
    id: `call_${prefix}${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: c.arguments },
  }));
}

/** Handles `POST /v1/chat/completions`, streaming or not. */
export async function handleChat(host: TinyModelHost, body: unknown, res: ServerResponse): Promise<void> {
  const req = parseChatRequest(body);
  const served = await host.servedFor(req.model);
  const tok = served.tokenizer;
  const toolsEnabled = req.tools.length > 0 && req.toolChoice !== 'none';
  const { ids: promptIds } = renderChat({ tokenizer: tok, messages: req.messages, tools: req.tools });
  const callId = tok.specialId('<|call|>');
  const forcedPrefix =
    req.toolChoice === 'required'
      ? [callId]
      : typeof req.toolChoice === 'object'
        ? [callId, ...tok.encode(req.toolChoice.name)]
        : undefined;
  const banned = ['<|bos|>', '<|system|>', '<|user|>', '<|assistant|>', '<|tool|>', '<|tools|>', '<|pad|>'].map((s) =>
    tok.specialId(s as '<|bos|>'),
  );
  if (!toolsEnabled) banned.push(callId, tok.specialId('<|/call|>'));
  const params = host.generationParams({
    served,
    promptIds,
    maxTokens: req.maxTokens,
    temperature: req.temperature,
    topP: req.topP,
    seed: req.seed,
    topLogprobs: req.logprobs ? req.topLogprobs : 0,
    forcedPrefix,
    bannedIds: banned,
  });
  const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const builders = Array.from(
    { length: req.n },
    () => new ChoiceBuilder({ tokenizer: tok, toolsEnabled, stop: req.stop }),
  );
  const base = { id, created, model: served.modelId };
  let cancel = () => {};
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
  if (req.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const first = builders.map((_, index) => ({
      index,
      delta: { role: 'assistant', content: '' },
      logprobs: null,
      finish_reason: null,
    }));
    res.write(chunk(first, req.returnTokenIds ? { prompt_token_ids: promptIds } : {}));
  }
  const gen = host.engine.generate({
    version: served.version,
    params,
    n: req.n,
    onTokens: (index, tokens) => {
      const b = builders[index]!;
      const delta = b.push(tokens);
      if (b.stopped && builders.every((x) => x.stopped)) cancel();
      if (!req.stream || delta.tokens.length === 0) return;
      const c: Record<string, unknown> = {
        index,
        delta: delta.content ? { content: delta.content } : {},
        logprobs: null,
        finish_reason: null,
      };
      if (req.logprobs) c.logprobs = { content: chatLogprobs(tok, delta.tokens) };
      if (req.returnTokenIds) c.token_ids = delta.tokens.map((t) => t.id);
      res.write(chunk([c]));
    },
  });
  cancel = gen.cancel;
  res.on('close', () => cancel()); // the client went away: stop generating (a no-op once finished)
  const results = await gen.result;
  const ends = results.map((r, i) => builders[i]!.finish(r.finishReason));
  const completionTokens = builders.reduce((s, b) => s + b.tokens.length, 0);
  const usage = {
    prompt_tokens: promptIds.length,
    completion_tokens: completionTokens,
    total_tokens: promptIds.length + completionTokens,
    prompt_tokens_details: { cached_tokens: results[0]?.cachedTokens ?? 0 },
  };
  if (req.stream) {
    ends.forEach((end, index) => {
      const delta: Record<string, unknown> = {};
      if (end.content) delta.content = end.content;
      if (end.toolCalls.length > 0)
        delta.tool_calls = toolCallsWire(end, `${id.slice(9, 21)}_${index}_`).map((c, i) => ({ index: i, ...c }));
      if (Object.keys(delta).length > 0) res.write(chunk([{ index, delta, logprobs: null, finish_reason: null }]));
      res.write(chunk([{ index, delta: {}, logprobs: null, finish_reason: end.finishReason }]));
    });
    if (req.includeUsage) res.write(chunk([], { usage }));
    res.end('data: [DONE]\n\n');
    return;
  }
  const choices = ends.map((end, index) => {
    const b = builders[index]!;
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: end.toolCalls.length > 0 && b.content === '' ? null : b.content,
    };
    if (end.toolCalls.length > 0) message.tool_calls = toolCallsWire(end, `${id.slice(9, 21)}_${index}_`);
    const choice: Record<string, unknown> = {
      index,
      message,
      logprobs: req.logprobs ? { content: chatLogprobs(tok, b.tokens) } : null,
      finish_reason: end.finishReason,
    };
    if (req.returnTokenIds) choice.token_ids = b.tokens.map((t) => t.id);
    return choice;
  });
  const body2: Record<string, unknown> = { ...base, object: 'chat.completion', choices, usage };
  if (req.returnTokenIds) body2.prompt_token_ids = promptIds;
  const data = JSON.stringify(body2);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}
