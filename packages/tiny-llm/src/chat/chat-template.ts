import { UserError } from '@agl/core/errors';
import type { TextSegment, TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import type { WireChatMessage, WireTool } from './chat-types';
import { formatToolCall } from './tool-call-parser';

/** The result of rendering a conversation. */
export interface RenderedChat {
  /** Prompt token ids. */
  ids: number[];
  /** 1 for tokens the assistant produced (its turns after `<|assistant|>`, including `<|end|>`), else 0. */
  assistantMask: number[];
}

/** Options of {@link renderChat}. */
export interface RenderChatOptions {
  tokenizer: TinyTokenizer;
  messages: readonly WireChatMessage[];
  /** Tools offered to the model; rendered compactly as `name(param, …)`, one per line. */
  tools?: readonly WireTool[] | undefined;
  /** Append `<|assistant|>` so the model writes the next assistant turn. Default true. */
  addGenerationPrompt?: boolean;
}

/** The text of a message's content (text parts joined). */
export function messageText(content: WireChatMessage['content']): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

/** The compact tool listing the template shows the model. */
export function renderToolList(tools: readonly WireTool[]): string {
  return tools
    .map((t) => `${t.function.name}(${Object.keys(t.function.parameters?.properties ?? {}).join(', ')})`)
    .join('\n');
}

/**
 * The chat template:
 * `<|bos|>[<|tools|>tool list<|end|>]` then per message `<|role|>content<|end|>`; an assistant's tool calls follow its
 * content as `<|call|>name{json args}<|/call|>`. The generation prompt is `<|assistant|>`.
 * Tool-call ids are not rendered, so re-sent conversations keep the same prompt tokens.
 */
export function renderChat(options: RenderChatOptions): RenderedChat {
  const { tokenizer } = options;
  const ids: number[] = [];
  const mask: number[] = [];
  const push = (segments: TextSegment[], m: 0 | 1) => {
    const part = tokenizer.encodeSegments(segments);
    ids.push(...part);
    for (let i = 0; i < part.length; i++) mask.push(m);
  };
  push([{ special: '<|bos|>' }], 0);
  if (options.tools && options.tools.length > 0) {
    push([{ special: '<|tools|>' }, { text: renderToolList(options.tools) }, { special: '<|end|>' }], 0);
  }
  options.messages.forEach((msg, i) => {
    const text = messageText(msg.content);
    switch (msg.role) {
      case 'system':
      case 'developer':
        push([{ special: '<|system|>' }, { text }, { special: '<|end|>' }], 0);
        break;
      case 'user':
        push([{ special: '<|user|>' }, { text }, { special: '<|end|>' }], 0);
        break;
      case 'tool':
      case 'function':
        push([{ special: '<|tool|>' }, { text }, { special: '<|end|>' }], 0);
        break;
      case 'assistant': {
        push([{ special: '<|assistant|>' }], 0);
        const body: TextSegment[] = [{ text }];
        for (const call of msg.tool_calls ?? [])
          body.push(...formatToolCall(call.function.name, call.function.arguments));
        body.push({ special: '<|end|>' });
        push(body, 1);
        break;
      }
      default:
        throw new UserError(
          `messages[${i}].role "${msg.role}" is not supported; use system, developer, user, assistant or tool.`,
        );
    }
  });
  if (options.addGenerationPrompt ?? true) push([{ special: '<|assistant|>' }], 0);
  return { ids, assistantMask: mask };
}
