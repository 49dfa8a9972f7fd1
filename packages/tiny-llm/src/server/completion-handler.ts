import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { GeneratedToken } from '../model/sequence';
import type { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { ChoiceBuilder } from './choice-builder';
import { parseCompletionRequest } from './request-parse';
import type { TinyModelHost } from './tiny-model-host';

/** OpenAI legacy-completions logprobs for tokens (`tokens`, `token_logprobs`, `top_logprobs`, `text_offset`). */
export function completionLogprobs(tok: TinyTokenizer, tokens: readonly GeneratedToken[], offset0: number) {
  let offset = offset0;
  const textOffset: number[] = [];
  for (const t of tokens) {
    textOffset.push(offset);
    if (!tok.isSpecial(t.id)) offset += tok.tokenText(t.id).length;
  }
  return {
    tokens: tokens.map((t) => tok.tokenText(t.id)),
    token_logprobs: tokens.map((t) => t.logprob),
    top_logprobs: tokens.map((t) => Object.fromEntries(t.top.map(([id, lp]) => [tok.tokenText(id), lp]))),
    text_offset: textOffset,
  };
}

/** Handles `POST /v1/completions` (raw prompts: text is encoded without special tokens; token ids pass as given). */
export async function handleCompletion(host: TinyModelHost, body: unknown, res: ServerResponse): Promise<void> {
  const req = parseCompletionRequest(body);
  const served = await host.servedFor(req.model);
  const tok = served.tokenizer;
  const id = `cmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, object: 'text_completion', created, model: served.modelId };
  const topLogprobs = req.logprobs ?? 0;
  const banned = ['<|bos|>', '<|pad|>'].map((s) => tok.specialId(s as '<|bos|>'));
  const prompts = req.prompts.map((p) => (typeof p === 'string' ? tok.encode(p) : p));
  const jobs = prompts.map((promptIds) =>
    host.generationParams({
      served,
      promptIds,
      maxTokens: req.maxTokens ?? 16,
      temperature: req.temperature,
      topP: req.topP,
      seed: req.seed,
      topLogprobs,
      bannedIds: banned,
    }),
  );
  const builders = prompts.map(() =>
    Array.from({ length: req.n }, () => new ChoiceBuilder({ tokenizer: tok, toolsEnabled: false, stop: req.stop })),
  );
  const sent = new Set<number>();
  const write = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  if (req.stream)
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const cancels: Array<() => void> = [];
  res.on('close', () => cancels.forEach((c) => c()));
  const results = await Promise.all(
    jobs.map((params, p) => {
      const gen = host.engine.generate({
        version: served.version,
        params,
        n: req.n,
        onTokens: (i, tokens) => {
          const b = builders[p]![i]!;
          const offset = b.content.length;
          const delta = b.push(tokens);
          if (builders[p]!.every((x) => x.stopped)) gen.cancel();
          if (!req.stream || delta.tokens.length === 0) return;
          const index = p * req.n + i;
          const c: Record<string, unknown> = { index, text: delta.content, logprobs: null, finish_reason: null };
          if (req.logprobs !== undefined) c.logprobs = completionLogprobs(tok, delta.tokens, offset);
          if (req.returnTokenIds) {
            c.token_ids = delta.tokens.map((t) => t.id);
            if (!sent.has(index)) c.prompt_token_ids = prompts[p];
          }
          sent.add(index);
          write([c]);
        },
      });
      cancels.push(gen.cancel);
      return gen.result;
    }),
  );
  let completionTokens = 0;
  const choices: Array<Record<string, unknown>> = [];
  results.forEach((choiceResults, p) =>
    choiceResults.forEach((r, i) => {
      const b = builders[p]![i]!;
      const end = b.finish(r.finishReason);
      completionTokens += b.tokens.length;
      const index = p * req.n + i;
      if (req.stream) {
        write([{ index, text: end.content, logprobs: null, finish_reason: end.finishReason }]);
        return;
      }
      const choice: Record<string, unknown> = {
        index,
        text: req.echo && typeof req.prompts[p] === 'string' ? `${req.prompts[p]}${b.content}` : b.content,
        logprobs: req.logprobs !== undefined ? completionLogprobs(tok, b.tokens, 0) : null,
        finish_reason: end.finishReason,
      };
      if (req.returnTokenIds) {
        choice.prompt_token_ids = prompts[p];
        choice.token_ids = b.tokens.map((t) => t.id);
      }
      choices.push(choice);
    }),
  );
  const promptTokens = prompts.reduce((s, p) => s + p.length, 0);
  const cachedTokens = results.reduce((s, r) => s + (r[0]?.cachedTokens ?? 0), 0);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  };
  if (req.stream) {
    if (req.includeUsage) write([], { usage });
    res.end('data: [DONE]\n\n');
    return;
  }
  const data = JSON.stringify({ ...base, choices, usage });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}
