import { isRecord, type JsonRecord } from '@agl/core/guards';
import type { LlmResponse } from '@agl/core/llm-span';
import { callResponseOf } from '../recording/call-records';
import type { CallPlan } from '../upstream/call-plan';
import { stripChunk } from '../upstream/upstream-body';
import { AnthropicStreamAssembler, AnthropicStreamTranslator } from './anthropic-stream';
import { OpenAiStreamAssembler } from './openai-stream-assembler';
import { formatSse, type SseEvent } from './sse-parser';

/**
 * Turns backend SSE events into what the client gets, event by event, and assembles the full answer for the span. The
 * terminal event (`[DONE]`, `message_stop`, `response.completed`) is held back in {@link StreamHandler.tail} until
 * the span is stored, so a client that reacts to it already finds the call in the store.
 */
export interface StreamHandler {
  /** Client text to write now for one backend event. */
  onEvent(event: SseEvent): string[];
  /** True once the backend's terminal event arrived. */
  readonly complete: boolean;
  /** An error reported inside the stream, if any. */
  readonly error: string | null;
  /** The assembled answer. */
  result(): LlmResponse;
  /** The held-back terminal event(s). */
  tail(): string[];
}

function parseData(data: string): JsonRecord | null {
  try {
    const value: unknown = JSON.parse(data);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

const rawOf = (event: SseEvent): string => `${event.raw}\n\n`;

class OpenAiStream implements StreamHandler {
  readonly #plan: CallPlan;
  readonly #assembler: OpenAiStreamAssembler;
  complete = false;
  error: string | null = null;

  constructor(plan: CallPlan) {
    this.#plan = plan;
    this.#assembler = new OpenAiStreamAssembler(plan.kind === 'completion' ? 'completion' : 'chat');
  }

  onEvent(event: SseEvent): string[] {
    if (event.data === '[DONE]') {
      this.complete = true;
      return [];
    }
    const chunk = parseData(event.data);
    if (chunk === null) return [rawOf(event)];
    if (chunk.error !== undefined) this.error = JSON.stringify(chunk.error);
    this.#assembler.push(chunk);
    if (!this.#plan.prepared.strip) return [rawOf(event)];
    return stripChunk(chunk, this.#plan.prepared.asked) ? [formatSse(JSON.stringify(chunk), event.event)] : [];
  }

  result(): LlmResponse {
    return callResponseOf(this.#plan.kind, this.#assembler.result());
  }

  tail(): string[] {
    return [formatSse('[DONE]')];
  }
}

class TranslatedAnthropicStream implements StreamHandler {
  readonly #assembler = new OpenAiStreamAssembler('chat');
  readonly #translator: AnthropicStreamTranslator;
  complete = false;
  error: string | null = null;

  constructor(model: string) {
    this.#translator = new AnthropicStreamTranslator(model);
  }

  onEvent(event: SseEvent): string[] {
    if (event.data === '[DONE]') {
      this.complete = true;
      return this.#translator.finish();
    }
    const chunk = parseData(event.data);
    if (chunk === null) return [];
    if (chunk.error !== undefined) {
      this.error = JSON.stringify(chunk.error);
      return [formatSse(JSON.stringify({ type: 'error', error: { type: 'api_error', message: this.error } }), 'error')];
    }
    this.#assembler.push(chunk);
    return this.#translator.push(chunk);
  }

  result(): LlmResponse {
    return callResponseOf('chat', this.#assembler.result());
  }

  tail(): string[] {
    return [this.#translator.stop()];
  }
}

class PassthroughAnthropicStream implements StreamHandler {
  readonly #assembler = new AnthropicStreamAssembler();
  #held: string[] = [];
  error: string | null = null;

  get complete(): boolean {
    return this.#assembler.complete;
  }

  onEvent(event: SseEvent): string[] {
    const data = parseData(event.data);
    if (data === null) return [rawOf(event)];
    if (data.type === 'error') this.error = JSON.stringify(data.error ?? data);
    this.#assembler.push(data);
    if (data.type === 'message_stop') {
      this.#held.push(rawOf(event));
      return [];
    }
    return [rawOf(event)];
  }

  result(): LlmResponse {
    return callResponseOf('anthropic-passthrough', this.#assembler.result());
  }

  tail(): string[] {
    return this.#held;
  }
}

const RESPONSE_TERMINAL = new Set(['response.completed', 'response.incomplete']);

class ResponsesStream implements StreamHandler {
  #final: JsonRecord | null = null;
  #held: string[] = [];
  error: string | null = null;

  get complete(): boolean {
    return this.#final !== null;
  }

  onEvent(event: SseEvent): string[] {
    const data = parseData(event.data);
    const type = event.event ?? (data && typeof data.type === 'string' ? data.type : null);
    if (type === 'response.failed' || type === 'error') this.error = event.data;
    if (type !== null && RESPONSE_TERMINAL.has(type) && data && isRecord(data.response)) {
      this.#final = data.response;
      this.#held.push(rawOf(event));
      return [];
    }
    return [rawOf(event)];
  }

  result(): LlmResponse {
    return callResponseOf('responses', this.#final ?? {});
  }

  tail(): string[] {
    return this.#held;
  }
}

/** The stream handler of a call plan. */
export function streamHandlerFor(plan: CallPlan, clientModel: unknown): StreamHandler {
  switch (plan.kind) {
    case 'anthropic-translate':
      return new TranslatedAnthropicStream(typeof clientModel === 'string' ? clientModel : '');
    case 'anthropic-passthrough':
      return new PassthroughAnthropicStream();
    case 'responses':
      return new ResponsesStream();
    default:
      return new OpenAiStream(plan);
  }
}
