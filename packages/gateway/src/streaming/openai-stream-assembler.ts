import { isRecord, type JsonRecord } from '@agl/core/guards';
import { isIntArray } from '@agl/core/llm-span';

interface ToolCallParts {
  id: string;
  type: string;
  name: string;
  args: string[];
}

interface ChoiceParts {
  role: string;
  text: string[];
  refusal: string[];
  toolCalls: Map<number, ToolCallParts>;
  finishReason: unknown;
  tokenIds: number[] | null;
  promptTokenIds: number[] | null;
  logprobs: unknown[] | null;
  legacyTokens: unknown[] | null;
  legacyLogprobs: unknown[] | null;
}

const newChoice = (): ChoiceParts => ({
  role: 'assistant',
  text: [],
  refusal: [],
  toolCalls: new Map(),
  finishReason: null,
  tokenIds: null,
  promptTokenIds: null,
  logprobs: null,
  legacyTokens: null,
  legacyLogprobs: null,
});

/**
 * Rebuilds the complete body of a streamed OpenAI response from its chunks: `chat.completion.chunk`s become a
 * `chat.completion`, `text_completion` chunks a `text_completion`. Token ids (vLLM: `prompt_token_ids` in the first
 * chunk, `token_ids` deltas per chunk) and logprobs are concatenated.
 */
export class OpenAiStreamAssembler {
  readonly #kind: 'chat' | 'completion';
  #head: JsonRecord = {};
  #promptTokenIds: number[] | null = null;
  #usage: unknown = undefined;
  #choices = new Map<number, ChoiceParts>();
  #chunks = 0;

  constructor(kind: 'chat' | 'completion') {
    this.#kind = kind;
  }

  /** Chunks seen so far. */
  get chunkCount(): number {
    return this.#chunks;
  }

  /** Adds one parsed chunk. */
  push(chunk: JsonRecord): void {
    this.#chunks += 1;
    for (const key of ['id', 'created', 'model', 'system_fingerprint'] as const) {
      if (chunk[key] !== undefined && chunk[key] !== null && this.#head[key] === undefined)
        this.#head[key] = chunk[key];
    }
    if (isIntArray(chunk.prompt_token_ids)) this.#promptTokenIds = chunk.prompt_token_ids;
    if (isRecord(chunk.usage)) this.#usage = chunk.usage;
    if (!Array.isArray(chunk.choices)) return;
    for (const raw of chunk.choices) {
      if (!isRecord(raw)) continue;
      const index = typeof raw.index === 'number' ? raw.index : 0;
      let choice = this.#choices.get(index);
      if (!choice) {
        choice = newChoice();
        this.#choices.set(index, choice);
      }
      this.#pushChoice(choice, raw);
    }
  }

  #pushChoice(choice: ChoiceParts, raw: JsonRecord): void {
    if (raw.finish_reason !== undefined && raw.finish_reason !== null) choice.finishReason = raw.finish_reason;
    if (isIntArray(raw.token_ids)) choice.tokenIds = [...(choice.tokenIds ?? []), ...raw.token_ids];
    if (isIntArray(raw.prompt_token_ids)) choice.promptTokenIds = raw.prompt_token_ids;
    const logprobs = raw.logprobs;
    if (isRecord(logprobs)) {
      if (Array.isArray(logprobs.content))
        choice.logprobs = [...(choice.logprobs ?? []), ...(logprobs.content as unknown[])];
      if (Array.isArray(logprobs.tokens))
        choice.legacyTokens = [...(choice.legacyTokens ?? []), ...(logprobs.tokens as unknown[])];
      if (Array.isArray(logprobs.token_logprobs))
        choice.legacyLogprobs = [...(choice.legacyLogprobs ?? []), ...(logprobs.token_logprobs as unknown[])];
    }
    if (this.#kind === 'completion') {
      if (typeof raw.text === 'string') choice.text.push(raw.text);
      return;
    }
    const delta = isRecord(raw.delta) ? raw.delta : {};
    if (typeof delta.role === 'string') choice.role = delta.role;
    if (typeof delta.content === 'string') choice.text.push(delta.content);
    if (typeof delta.refusal === 'string') choice.refusal.push(delta.refusal);
    if (!Array.isArray(delta.tool_calls)) return;
    for (const rawCall of delta.tool_calls) {
      if (!isRecord(rawCall)) continue;
      const index = typeof rawCall.index === 'number' ? rawCall.index : choice.toolCalls.size;
      let call = choice.toolCalls.get(index);
      if (!call) {
        call = { id: '', type: 'function', name: '', args: [] };
        choice.toolCalls.set(index, call);
      }
      if (typeof rawCall.id === 'string' && rawCall.id !== '') call.id = rawCall.id;
      if (typeof rawCall.type === 'string') call.type = rawCall.type;
      const fn = isRecord(rawCall.function) ? rawCall.function : {};
      if (typeof fn.name === 'string' && fn.name !== '') call.name = fn.name;
      if (typeof fn.arguments === 'string') call.args.push(fn.arguments);
    }
  }

  /** The assembled non-streaming body. */
  result(): JsonRecord {
    const indexes = [...this.#choices.keys()].sort((a, b) => a - b);
    const choices = indexes.map((index) => this.#choiceBody(index, this.#choices.get(index)!));
    const body: JsonRecord = {
      ...this.#head,
      object: this.#kind === 'chat' ? 'chat.completion' : 'text_completion',
      choices,
    };
    if (this.#usage !== undefined) body.usage = this.#usage;
    if (this.#promptTokenIds !== null) body.prompt_token_ids = this.#promptTokenIds;
    return body;
  }

  #choiceBody(index: number, c: ChoiceParts): JsonRecord {
    const choice: JsonRecord = { index, finish_reason: c.finishReason };
    if (c.tokenIds !== null) choice.token_ids = c.tokenIds;
    if (c.promptTokenIds !== null) choice.prompt_token_ids = c.promptTokenIds;
    if (this.#kind === 'completion') {
      choice.text = c.text.join('');
      choice.logprobs =
        c.legacyTokens !== null ? { tokens: c.legacyTokens, token_logprobs: c.legacyLogprobs ?? [] } : null;
      return choice;
    }
    const message: JsonRecord = { role: c.role, content: c.text.length > 0 ? c.text.join('') : null };
    if (c.refusal.length > 0) message.refusal = c.refusal.join('');
    if (c.toolCalls.size > 0) {
      message.tool_calls = [...c.toolCalls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, t]) => ({ id: t.id, type: t.type, function: { name: t.name, arguments: t.args.join('') } }));
    }
    choice.message = message;
    choice.logprobs = c.logprobs !== null ? { content: c.logprobs } : null;
    return choice;
  }
}
