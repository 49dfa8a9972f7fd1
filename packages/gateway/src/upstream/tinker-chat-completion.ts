import { randomUUID } from 'node:crypto';
import { ValidationError } from '@agl/core/errors';
import { isRecord, type JsonRecord } from '@agl/core/guards';
import type { ChatMessage, ChatTokenizer, ChatTool, SampleOptions, SampleResponse } from '@agl/tinker';

/**
 * An OpenAI chat completion answered by a Tinker sampler, in the shape vLLM gives (`prompt_token_ids` on the body,
 * `token_ids` and `logprobs.content` on each choice), so the gateway records the sampled ids exactly as `asample`
 * returned them. Pure functions: the HTTP side is in `tinker-upstream.ts`.
 */

const bad = (field: string, message: string): ValidationError =>
  new ValidationError(message, [{ path: field, message }], { status: 400 });

function numberField(body: JsonRecord, field: string, check: (n: number) => boolean, rule: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || !check(value))
    throw bad(field, `"${field}" must be ${rule}, got ${JSON.stringify(value)}.`);
  return value;
}

/** The parts of a chat-completions request a Tinker sampler needs, checked (400 naming the field otherwise). */
export interface TinkerChatRequest {
  messages: ChatMessage[];
  tools: ChatTool[] | null;
  sample: SampleOptions;
  stream: boolean;
  includeUsage: boolean;
  wantTokenIds: boolean;
  wantLogprobs: boolean;
  templateKwargs: Record<string, unknown>;
}

/**
 * Reads a chat-completions body: messages and tools for the template, and sampling parameters for `asample` (stop on
 * the template's end-of-turn token ids; a client's `stop` strings are sent with the end-of-turn texts instead).
 */
export function tinkerChatRequest(
  body: JsonRecord,
  tokenizer: ChatTokenizer,
  defaults: { maxTokens: number },
): TinkerChatRequest {
  if (!Array.isArray(body.messages) || body.messages.length === 0 || !body.messages.every(isRecord))
    throw bad('messages', '"messages" must be a non-empty array of {role, content} objects.');
  const tools = body.tools === undefined || body.tools === null ? null : body.tools;
  if (tools !== null && (!Array.isArray(tools) || !tools.every((t) => isRecord(t) && isRecord(t.function))))
    throw bad('tools', '"tools" must be a list of {"type": "function", "function": {name, parameters}} objects.');
  const maxTokens =
    numberField(body, 'max_completion_tokens', (n) => Number.isInteger(n) && n > 0, 'a positive integer') ??
    numberField(body, 'max_tokens', (n) => Number.isInteger(n) && n > 0, 'a positive integer') ??
    defaults.maxTokens;
  const n = numberField(body, 'n', (v) => Number.isInteger(v) && v >= 1 && v <= 128, 'an integer from 1 to 128') ?? 1;
  const temperature = numberField(body, 'temperature', (v) => v >= 0, 'a number ≥ 0');
  const topP = numberField(body, 'top_p', (v) => v > 0 && v <= 1, 'a number in (0, 1]');
  const topK = numberField(
    body,
    'top_k',
    (v) => Number.isInteger(v) && (v === -1 || v > 0),
    '-1 or a positive integer',
  );
  const seed = numberField(body, 'seed', Number.isInteger, 'an integer');
  let stop: SampleOptions['stop'] = [...tokenizer.stopTokenIds];
  if (body.stop !== undefined && body.stop !== null) {
    const given = typeof body.stop === 'string' ? [body.stop] : body.stop;
    if (!Array.isArray(given) || !given.every((s) => typeof s === 'string' && s !== ''))
      throw bad('stop', '"stop" must be a string or a list of non-empty strings.');
    stop = [...(given as string[]), ...tokenizer.stopTokens];
  }
  const kwargs = isRecord(body.chat_template_kwargs) ? body.chat_template_kwargs : {};
  const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
  return {
    messages: body.messages as unknown as ChatMessage[],
    tools: tools as ChatTool[] | null,
    sample: {
      numSamples: n,
      maxTokens,
      stop,
      ...(temperature === undefined ? {} : { temperature }),
      ...(topP === undefined ? {} : { topP }),
      ...(topK === undefined ? {} : { topK }),
      ...(seed === undefined ? {} : { seed }),
    },
    stream: body.stream === true,
    includeUsage: streamOptions.include_usage === true,
    wantTokenIds: body.return_token_ids === true,
    wantLogprobs: body.logprobs === true,
    templateKwargs: kwargs,
  };
}

/** One answered call: what was sent to `asample` and what it returned. */
export interface TinkerSampled {
  model: string;
  promptIds: number[];
  response: SampleResponse;
  tokenizer: ChatTokenizer;
  request: TinkerChatRequest;
}

interface ChoiceParts {
  index: number;
  message: JsonRecord;
  finishReason: string;
  tokenIds: number[];
  logprobs: JsonRecord[] | null;
}

/** The OpenAI logprobs `content` list of sampled ids: each token's text and the logprob `asample` returned. */
function logprobsContent(tokenizer: ChatTokenizer, ids: readonly number[], logprobs: readonly number[]): JsonRecord[] {
  return ids.map((id, i) => {
    const token = tokenizer.decode([id]);
    return { token, logprob: logprobs[i] ?? null, bytes: [...Buffer.from(token, 'utf8')], top_logprobs: [] };
  });
}

function choicesOf(s: TinkerSampled): ChoiceParts[] {
  return s.response.sequences.map((seq, index) => {
    const parsed = s.tokenizer.parseOutput(seq.tokens);
    const finishReason =
      seq.stop_reason === 'length' ? 'length' : parsed.finishReason === 'length' ? 'stop' : parsed.finishReason;
    return {
      index,
      message: parsed.message as unknown as JsonRecord,
      finishReason,
      tokenIds: seq.tokens,
      logprobs: seq.logprobs ? logprobsContent(s.tokenizer, seq.tokens, seq.logprobs) : null,
    };
  });
}

function usageOf(s: TinkerSampled): JsonRecord {
  const completion = s.response.sequences.reduce((sum, seq) => sum + seq.tokens.length, 0);
  return {
    prompt_tokens: s.promptIds.length,
    completion_tokens: completion,
    total_tokens: s.promptIds.length + completion,
  };
}

/** A new completion id and creation time. */
export function completionHead(model: string): { id: string; created: number; model: string } {
  return { id: `chatcmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

/** The non-streaming `chat.completion` body. */
export function tinkerCompletionBody(s: TinkerSampled, head = completionHead(s.model)): JsonRecord {
  const body: JsonRecord = {
    ...head,
    object: 'chat.completion',
    choices: choicesOf(s).map((c) => ({
      index: c.index,
      message: c.message,
      finish_reason: c.finishReason,
      logprobs: s.request.wantLogprobs && c.logprobs !== null ? { content: c.logprobs } : null,
      ...(s.request.wantTokenIds ? { token_ids: c.tokenIds } : {}),
    })),
    usage: usageOf(s),
  };
  if (s.request.wantTokenIds) body.prompt_token_ids = s.promptIds;
  return body;
}

const sse = (chunk: JsonRecord): string => `data: ${JSON.stringify(chunk)}\n\n`;

/**
 * The `chat.completion.chunk` events of a sampled answer (sampling is not incremental, so they follow it): the role
 * (with `prompt_token_ids`), the reasoning and content deltas with all sampled `token_ids` and logprobs, one delta per
 * tool call, the finish reason, the usage chunk when asked, and `[DONE]`.
 */
export function tinkerCompletionEvents(s: TinkerSampled, head = completionHead(s.model)): string[] {
  const base = { ...head, object: 'chat.completion.chunk' };
  const events: string[] = [];
  const choices = choicesOf(s);
  const first: JsonRecord = {
    ...base,
    choices: choices.map((c) => ({
      index: c.index,
      // A reply that is only tool calls has null content, as in the non-streaming answer.
      delta: { role: 'assistant', ...(c.message.content === null ? {} : { content: '' }) },
      logprobs: null,
      finish_reason: null,
    })),
  };
  if (s.request.wantTokenIds) first.prompt_token_ids = s.promptIds;
  events.push(sse(first));
  for (const c of choices) {
    const delta: JsonRecord = {};
    if (typeof c.message.reasoning_content === 'string') delta.reasoning_content = c.message.reasoning_content;
    if (typeof c.message.content === 'string' && c.message.content !== '') delta.content = c.message.content;
    const choice: JsonRecord = {
      index: c.index,
      delta,
      logprobs: s.request.wantLogprobs && c.logprobs !== null ? { content: c.logprobs } : null,
      finish_reason: null,
    };
    if (s.request.wantTokenIds) choice.token_ids = c.tokenIds;
    events.push(sse({ ...base, choices: [choice] }));
    const calls = Array.isArray(c.message.tool_calls) ? (c.message.tool_calls as JsonRecord[]) : [];
    calls.forEach((call, i) => {
      events.push(
        sse({
          ...base,
          choices: [
            { index: c.index, delta: { tool_calls: [{ index: i, ...call }] }, logprobs: null, finish_reason: null },
          ],
        }),
      );
    });
    events.push(
      sse({ ...base, choices: [{ index: c.index, delta: {}, logprobs: null, finish_reason: c.finishReason }] }),
    );
  }
  if (s.request.includeUsage) events.push(sse({ ...base, choices: [], usage: usageOf(s) }));
  events.push('data: [DONE]\n\n');
  return events;
}
