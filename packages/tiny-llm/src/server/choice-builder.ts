import { parseToolCalls, type ParsedToolCall } from '../chat/tool-call-parser';
import type { FinishReason, GeneratedToken } from '../model/sequence';
import type { TinyTokenizer } from '../tokenizer/tiny-tokenizer';

/** What one push of tokens adds to a choice. */
export interface ChoiceDelta {
  /** New visible text (empty while inside a tool call). */
  content: string;
  /** The tokens this delta covers (after stop-string truncation). */
  tokens: GeneratedToken[];
}

/** The end of a choice. */
export interface ChoiceEnd {
  /** Text to emit at the end (the raw tool-call text when it was malformed). */
  content: string;
  toolCalls: ParsedToolCall[];
  finishReason: 'stop' | 'length' | 'tool_calls';
}

/**
 * Turns a choice's token stream into OpenAI message parts: visible text until `<|call|>`, then a buffered tool-call
 * block parsed at the end. Stop strings end the choice early (`stopped` turns true; the caller cancels).
 */
export class ChoiceBuilder {
  readonly tokens: GeneratedToken[] = [];
  content = '';
  stopped = false;
  readonly #tok: TinyTokenizer;
  readonly #toolsEnabled: boolean;
  readonly #stop: string[];
  readonly #decoder: ReturnType<TinyTokenizer['decoder']>;
  readonly #callId: number;
  readonly #endId: number;
  #toolText: string | undefined;

  constructor(options: { tokenizer: TinyTokenizer; toolsEnabled: boolean; stop: string[] }) {
    this.#tok = options.tokenizer;
    this.#toolsEnabled = options.toolsEnabled;
    this.#stop = options.stop;
    this.#decoder = this.#tok.decoder();
    this.#callId = this.#tok.specialId('<|call|>');
    this.#endId = this.#tok.specialId('<|end|>');
  }

  /** Adds generated tokens; returns the visible delta. Tokens after a stop string are dropped. */
  push(tokens: readonly GeneratedToken[]): ChoiceDelta {
    const delta: ChoiceDelta = { content: '', tokens: [] };
    for (const t of tokens) {
      if (this.stopped) break;
      this.tokens.push(t);
      delta.tokens.push(t);
      if (this.#toolText === undefined && this.#toolsEnabled && t.id === this.#callId) this.#toolText = '';
      if (this.#toolText !== undefined) {
        if (t.id !== this.#endId) this.#toolText += this.#tok.decode([t.id], { keepSpecial: true });
        continue;
      }
      const piece = this.#decoder.push([t.id]);
      const before = this.content.length;
      this.content += piece;
      const hit = this.#firstStop(Math.max(0, before - 64));
      if (hit >= 0) {
        this.stopped = true;
        delta.content += this.content.slice(before, Math.max(before, hit));
        this.content = this.content.slice(0, hit);
      } else delta.content += piece;
    }
    return delta;
  }

  /** Ends the choice. */
  finish(reason: FinishReason): ChoiceEnd {
    const tail = this.#toolText === undefined && !this.stopped ? this.#decoder.flush() : '';
    this.content += tail;
    if (this.#toolText === undefined)
      return { content: tail, toolCalls: [], finishReason: this.stopped ? 'stop' : reason };
    const parsed = parseToolCalls(this.#toolText);
    if (parsed.malformed || parsed.toolCalls.length === 0) {
      this.content += this.#toolText;
      return { content: this.#toolText, toolCalls: [], finishReason: reason };
    }
    return { content: '', toolCalls: parsed.toolCalls, finishReason: 'tool_calls' };
  }

  #firstStop(from: number): number {
    let best = -1;
    for (const s of this.#stop) {
      const i = this.content.indexOf(s, from);
      if (i >= 0 && (best < 0 || i < best)) best = i;
    }
    return best;
  }
}
