import { isRecord, type JsonRecord } from '@agl/core/guards';
import { isIntArray } from '@agl/core/llm-span';
import { messageIdOf, stopReasonOf } from '../translation/anthropic-translation';
import { formatSse } from './sse-parser';

const event = (type: string, data: JsonRecord): string => formatSse(JSON.stringify({ type, ...data }), type);

/**
 * Turns a stream of `chat.completion.chunk`s into Anthropic's Messages stream (`message_start`, text and `tool_use`
 * content blocks with `text_delta` / `input_json_delta`, `message_delta`, `message_stop`), chunk by chunk.
 */
export class AnthropicStreamTranslator {
  readonly #model: string;
  #started = false;
  #nextIndex = 0;
  #open: { kind: 'text' } | { kind: 'tool'; toolIndex: number } | null = null;
  #openIndex = -1;
  #toolBlocks = new Map<number, number>();
  #finishReason: unknown = null;
  #outputTokens = 0;
  #inputTokens = 0;
  #tokenIdCount = 0;

  constructor(model: string) {
    this.#model = model;
  }

  /** The events one chunk produces, as SSE text. */
  push(chunk: JsonRecord): string[] {
    const out: string[] = [];
    if (!this.#started) {
      this.#started = true;
      if (isIntArray(chunk.prompt_token_ids)) this.#inputTokens = chunk.prompt_token_ids.length;
      out.push(
        event('message_start', {
          message: {
            id: messageIdOf(chunk.id),
            type: 'message',
            role: 'assistant',
            model: typeof chunk.model === 'string' ? chunk.model : this.#model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: this.#inputTokens, output_tokens: 0 },
          },
        }),
      );
    }
    if (isRecord(chunk.usage)) {
      if (typeof chunk.usage.completion_tokens === 'number') this.#outputTokens = chunk.usage.completion_tokens;
      if (typeof chunk.usage.prompt_tokens === 'number') this.#inputTokens = chunk.usage.prompt_tokens;
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find(isRecord) : undefined;
    if (!choice) return out;
    if (isIntArray(choice.token_ids)) this.#tokenIdCount += choice.token_ids.length;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.#finishReason = choice.finish_reason;
    const delta = isRecord(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.#open?.kind !== 'text') out.push(...this.#openBlock({ kind: 'text' }, { type: 'text', text: '' }));
      out.push(
        event('content_block_delta', { index: this.#openIndex, delta: { type: 'text_delta', text: delta.content } }),
      );
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isRecord) : []) {
      const toolIndex = typeof call.index === 'number' ? call.index : 0;
      const fn = isRecord(call.function) ? call.function : {};
      if (!this.#toolBlocks.has(toolIndex)) {
        const block = {
          type: 'tool_use',
          id: typeof call.id === 'string' ? call.id : `toolu_${toolIndex}`,
          name: typeof fn.name === 'string' ? fn.name : '',
          input: {},
        };
        out.push(...this.#openBlock({ kind: 'tool', toolIndex }, block));
        this.#toolBlocks.set(toolIndex, this.#openIndex);
      }
      if (typeof fn.arguments === 'string' && fn.arguments !== '') {
        out.push(
          event('content_block_delta', {
            index: this.#toolBlocks.get(toolIndex)!,
            delta: { type: 'input_json_delta', partial_json: fn.arguments },
          }),
        );
      }
    }
    return out;
  }

  #openBlock(kind: { kind: 'text' } | { kind: 'tool'; toolIndex: number }, block: JsonRecord): string[] {
    const out = this.#closeBlock();
    this.#open = kind;
    this.#openIndex = this.#nextIndex;
    this.#nextIndex += 1;
    out.push(event('content_block_start', { index: this.#openIndex, content_block: block }));
    return out;
  }

  #closeBlock(): string[] {
    if (this.#open === null) return [];
    this.#open = null;
    return [event('content_block_stop', { index: this.#openIndex })];
  }

  /** The closing events before `message_stop` (last block stop, `message_delta` with stop reason and usage). */
  finish(): string[] {
    const out: string[] = [];
    if (this.#nextIndex === 0) out.push(...this.#openBlock({ kind: 'text' }, { type: 'text', text: '' }));
    out.push(...this.#closeBlock());
    const outputTokens = this.#outputTokens || this.#tokenIdCount;
    out.push(
      event('message_delta', {
        delta: { stop_reason: stopReasonOf(this.#finishReason), stop_sequence: null },
        usage: { input_tokens: this.#inputTokens, output_tokens: outputTokens },
      }),
    );
    return out;
  }

  /** The final `message_stop` event. */
  stop(): string {
    return event('message_stop', {});
  }
}

/** Rebuilds the complete Anthropic `message` from a passed-through Messages stream. */
export class AnthropicStreamAssembler {
  #message: JsonRecord = { type: 'message', role: 'assistant', content: [] };
  #blocks: JsonRecord[] = [];
  #json = new Map<number, string[]>();
  #stopped = false;

  /** True once `message_stop` was seen. */
  get complete(): boolean {
    return this.#stopped;
  }

  /** Adds one parsed event. */
  push(data: JsonRecord): void {
    switch (data.type) {
      case 'message_start':
        if (isRecord(data.message)) this.#message = { ...data.message };
        break;
      case 'content_block_start':
        if (typeof data.index === 'number' && isRecord(data.content_block))
          this.#blocks[data.index] = { ...data.content_block };
        break;
      case 'content_block_delta':
        this.#delta(data);
        break;
      case 'content_block_stop':
        this.#stopBlock(data);
        break;
      case 'message_delta':
        if (isRecord(data.delta)) Object.assign(this.#message, data.delta);
        if (isRecord(data.usage))
          this.#message.usage = { ...(isRecord(this.#message.usage) ? this.#message.usage : {}), ...data.usage };
        break;
      case 'message_stop':
        this.#stopped = true;
        break;
    }
  }

  #delta(data: JsonRecord): void {
    const index = typeof data.index === 'number' ? data.index : -1;
    const block = this.#blocks[index];
    if (!block || !isRecord(data.delta)) return;
    if (data.delta.type === 'text_delta')
      block.text = `${typeof block.text === 'string' ? block.text : ''}${String(data.delta.text ?? '')}`;
    else if (data.delta.type === 'input_json_delta') {
      const parts = this.#json.get(index) ?? [];
      parts.push(String(data.delta.partial_json ?? ''));
      this.#json.set(index, parts);
    }
  }

  #stopBlock(data: JsonRecord): void {
    const index = typeof data.index === 'number' ? data.index : -1;
    const parts = this.#json.get(index);
    const block = this.#blocks[index];
    if (!parts || !block) return;
    try {
      block.input = JSON.parse(parts.join('')) as unknown;
    } catch {
      block.input = {};
    }
  }

  /** The assembled message. */
  result(): JsonRecord {
    return { ...this.#message, content: this.#blocks.filter(isRecord) };
  }
}
