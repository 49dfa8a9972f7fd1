import { ValidationError } from '@agl/core/errors';
import type { WireChatMessage, WireTool } from '../chat/chat-types';

/** Sampling and output options shared by both endpoints. */
export interface CommonOptions {
  model: string | undefined;
  maxTokens: number | undefined;
  temperature: number;
  topP: number;
  n: number;
  seed: number | undefined;
  stream: boolean;
  includeUsage: boolean;
  stop: string[];
  returnTokenIds: boolean;
}

/** A parsed `/v1/chat/completions` body. */
export interface ChatRequest extends CommonOptions {
  messages: WireChatMessage[];
  tools: WireTool[];
  toolChoice: 'none' | 'auto' | 'required' | { name: string };
  logprobs: boolean;
  topLogprobs: number;
}

/** A parsed `/v1/completions` body. */
export interface CompletionRequest extends CommonOptions {
  /** One entry per prompt: text or token ids. */
  prompts: Array<string | number[]>;
  /** Number of alternatives per position, or undefined for no logprobs. */
  logprobs: number | undefined;
  echo: boolean;
}

type Body = Record<string, unknown>;

function bad(field: string, message: string): never {
  throw new ValidationError(`${field}: ${message}`, [{ path: field, message }], { status: 400 });
}

function num(body: Body, field: string, def: number, min: number, max: number, int = false): number {
  const v = body[field];
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (int && !Number.isInteger(v))) {
    bad(field, `must be ${int ? 'an integer' : 'a number'} between ${min} and ${max}, got ${JSON.stringify(v)}.`);
  }
  return v;
}

function bool(body: Body, field: string): boolean {
  const v = body[field];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') bad(field, `must be true or false, got ${JSON.stringify(v)}.`);
  return v;
}

function common(body: Body): CommonOptions {
  if (body.model !== undefined && typeof body.model !== 'string') bad('model', 'must be a string.');
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (
    maxTokens !== undefined &&
    maxTokens !== null &&
    (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)
  ) {
    bad(
      body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens',
      `must be a positive integer, got ${JSON.stringify(maxTokens)}.`,
    );
  }
  const stopRaw = body.stop;
  let stop: string[] = [];
  if (typeof stopRaw === 'string') stop = [stopRaw];
  else if (Array.isArray(stopRaw) && stopRaw.every((s) => typeof s === 'string')) stop = stopRaw as string[];
  else if (stopRaw !== undefined && stopRaw !== null) bad('stop', 'must be a string or a list of strings.');
  const seed = body.seed;
  if (seed !== undefined && seed !== null && (typeof seed !== 'number' || !Number.isInteger(seed)))
    bad('seed', 'must be an integer.');
  const streamOptions = body.stream_options as Body | undefined | null;
  return {
    model: body.model as string | undefined,
    maxTokens: (maxTokens as number | undefined) ?? undefined,
    temperature: num(body, 'temperature', 1, 0, 2),
    topP: num(body, 'top_p', 1, 1e-6, 1),
    n: num(body, 'n', 1, 1, 16, true),
    seed: (seed as number | undefined) ?? undefined,
    stream: bool(body, 'stream'),
    includeUsage: streamOptions?.include_usage === true,
    stop: stop.filter((s) => s.length > 0),
    returnTokenIds: bool(body, 'return_token_ids'),
  };
}

/** Validates a chat request body (OpenAI + vLLM's `return_token_ids`). */
export function parseChatRequest(raw: unknown): ChatRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('body', 'must be a JSON object.');
  const body = raw as Body;
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) bad('messages', 'must be a non-empty list of chat messages.');
  messages.forEach((m, i) => {
    if (typeof m !== 'object' || m === null || typeof (m as Body).role !== 'string')
      bad(`messages[${i}].role`, 'is required (system, user, assistant or tool).');
  });
  const toolsRaw = body.tools ?? [];
  if (!Array.isArray(toolsRaw)) bad('tools', 'must be a list of {type: "function", function: {name, parameters}}.');
  toolsRaw.forEach((t, i) => {
    const fn = (t as Body | null)?.function as Body | undefined;
    if (typeof fn?.name !== 'string') bad(`tools[${i}].function.name`, 'is required.');
  });
  const tools = toolsRaw as WireTool[];
  let toolChoice: ChatRequest['toolChoice'] = tools.length > 0 ? 'auto' : 'none';
  const tc = body.tool_choice;
  if (tc === 'none' || tc === 'auto' || tc === 'required') toolChoice = tc;
  else if (typeof tc === 'object' && tc !== null) {
    const name = ((tc as Body).function as Body | undefined)?.name;
    if (typeof name !== 'string')
      bad('tool_choice', 'must be "none", "auto", "required" or {type: "function", function: {name}}.');
    if (!tools.some((t) => t.function.name === name))
      bad('tool_choice.function.name', `"${name}" is not one of the request's tools.`);
    toolChoice = { name };
  } else if (tc !== undefined && tc !== null)
    bad('tool_choice', 'must be "none", "auto", "required" or {type: "function", function: {name}}.');
  if ((toolChoice === 'required' || typeof toolChoice === 'object') && tools.length === 0)
    bad('tool_choice', 'needs a non-empty tools list.');
  return {
    ...common(body),
    messages: messages as WireChatMessage[],
    tools,
    toolChoice,
    logprobs: bool(body, 'logprobs'),
    topLogprobs: num(body, 'top_logprobs', 0, 0, 20, true),
  };
}

/** Validates a completions request body. */
export function parseCompletionRequest(raw: unknown): CompletionRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('body', 'must be a JSON object.');
  const body = raw as Body;
  const p = body.prompt;
  const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));
  let prompts: Array<string | number[]>;
  if (typeof p === 'string') prompts = [p];
  else if (isIds(p)) prompts = [p];
  else if (Array.isArray(p) && p.length > 0 && p.every((x) => typeof x === 'string' || isIds(x)))
    prompts = p as Array<string | number[]>;
  else bad('prompt', 'must be a string, a list of token ids, or a list of those.');
  const lp = body.logprobs;
  if (lp !== undefined && lp !== null && (typeof lp !== 'number' || !Number.isInteger(lp) || lp < 0 || lp > 20)) {
    bad('logprobs', 'must be an integer between 0 and 20 (the number of alternatives per token).');
  }
  return {
    ...common(body),
    prompts,
    logprobs: (lp as number | undefined | null) ?? undefined,
    echo: bool(body, 'echo'),
  };
}
