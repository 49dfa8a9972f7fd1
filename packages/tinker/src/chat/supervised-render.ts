import { ChatTemplateError } from './chat-template-error';
import type { ChatMessage, MessageSpan, RenderOptions, SupervisedExample } from './chat-types';
import type { ChatTokenizer } from './chat-tokenizer';

/** Options of supervised rendering. */
export interface SupervisedOptions extends RenderOptions {
  /** Which assistant replies get weight 1: every one (default) or only the last. */
  trainOn?: 'all' | 'last';
}

interface Segment {
  text: string;
  weight: 0 | 1;
  message: number;
}

/** Builds an example from text segments, encoding each on its own so a reply's ids start where its prompt's end. */
function build(tok: ChatTokenizer, segments: readonly Segment[]): SupervisedExample {
  const tokens: number[] = [];
  const weights: number[] = [];
  const spans: MessageSpan[] = [];
  for (const s of segments) {
    const ids = tok.encode(s.text);
    if (s.weight === 1)
      spans.push({ message: s.message, role: 'assistant', start: tokens.length, end: tokens.length + ids.length });
    for (const id of ids) {
      tokens.push(id);
      weights.push(s.weight);
    }
  }
  return { tokens, weights, text: segments.map((s) => s.text).join(''), spans };
}

/** End (exclusive) of the assistant reply starting at `from` in `text`: just past its first end-of-turn token. */
function replyEnd(tok: ChatTokenizer, text: string, from: number): number {
  let end = -1;
  for (const stop of tok.stopTokens) {
    const at = text.indexOf(stop, from);
    if (at >= 0 && (end < 0 || at + stop.length < end)) end = at + stop.length;
  }
  return end < 0 ? text.length : end;
}

/**
 * Renders a conversation for supervised training with the model's own template. Each trained assistant reply starts
 * where the template's generation prompt for the messages before it ends, so prompt tokens are exactly what a sampler
 * would have been given; the reply runs through its end-of-turn token. Text after the last trained reply is dropped.
 * When the template renders a turn differently once later turns follow (Qwen3 drops earlier reasoning), that turn
 * becomes an example of its own.
 */
export function renderSupervisedExamples(
  tok: ChatTokenizer,
  messages: readonly ChatMessage[],
  options: SupervisedOptions = {},
): SupervisedExample[] {
  const render = { tools: options.tools ?? null, templateKwargs: options.templateKwargs ?? {} };
  let targets = messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  if (options.trainOn === 'last') targets = targets.slice(-1);
  if (targets.length === 0) {
    throw new ChatTemplateError(
      `The conversation (${messages.length} messages) has no assistant message to train on; supervised examples need at least one.`,
    );
  }
  if (targets[0] === 0) {
    throw new ChatTemplateError(
      'The conversation starts with an assistant message, which has no prompt; put a system or user message first.',
    );
  }
  const full = tok.renderText(messages, { ...render, addGenerationPrompt: false });
  const whole: Segment[] = [];
  const alone: Segment[][] = [];
  let cursor = 0;
  for (const k of targets) {
    const prompt = tok.renderText(messages.slice(0, k), { ...render, addGenerationPrompt: true });
    if (full.startsWith(prompt) && prompt.length >= cursor) {
      const end = replyEnd(tok, full, prompt.length);
      whole.push({ text: full.slice(cursor, prompt.length), weight: 0, message: k });
      whole.push({ text: full.slice(prompt.length, end), weight: 1, message: k });
      cursor = end;
      continue;
    }
    const upTo = tok.renderText(messages.slice(0, k + 1), { ...render, addGenerationPrompt: false });
    if (!upTo.startsWith(prompt)) {
      throw new ChatTemplateError(
        `The chat template of tokenizer "${tok.source}" renders assistant message ${k} so that it does not continue its own generation prompt; it cannot be trained on exactly.`,
      );
    }
    const end = replyEnd(tok, upTo, prompt.length);
    alone.push([
      { text: prompt, weight: 0, message: k },
      { text: upTo.slice(prompt.length, end), weight: 1, message: k },
    ]);
  }
  const examples = alone.map((segments) => build(tok, segments));
  if (whole.length > 0) examples.unshift(build(tok, whole));
  return examples;
}

/**
 * A supervised example from ids already known (a gateway span's `prompt_token_ids` and `response_token_ids`): the
 * prompt weighted 0, the sampled reply 1. Nothing is re-tokenized.
 */
export function supervisedFromTokenIds(
  promptIds: readonly number[],
  responseIds: readonly number[],
  decode?: (ids: readonly number[]) => string,
): SupervisedExample {
  const tokens = [...promptIds, ...responseIds];
  return {
    tokens,
    weights: tokens.map((_, i) => (i < promptIds.length ? 0 : 1)),
    text: decode ? decode(tokens) : '',
    spans: [{ message: -1, role: 'assistant', start: promptIds.length, end: tokens.length }],
  };
}
