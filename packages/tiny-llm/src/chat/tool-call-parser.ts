import { isRecord } from '@agl/core/guards';
import type { TextSegment } from '../tokenizer/tiny-tokenizer';

/** One parsed tool call. */
export interface ParsedToolCall {
  name: string;
  /** The JSON arguments, exactly as the model wrote them (an object literal). */
  arguments: string;
}

/** The result of {@link parseToolCalls}. */
export interface ParsedAssistantOutput {
  /** Text before the first tool call (or the whole text when there is none or parsing failed). */
  content: string;
  toolCalls: ParsedToolCall[];
  /** True when `<|call|>` appeared but a block was malformed; then `content` holds the raw text. */
  malformed: boolean;
}

const OPEN = '<|call|>';
const CLOSE = '<|/call|>';
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** The template segments of one tool call: `<|call|>name{args}<|/call|>`. */
export function formatToolCall(name: string, args: string): TextSegment[] {
  return [{ special: '<|call|>' }, { text: `${name}${args.trim() === '' ? '{}' : args}` }, { special: '<|/call|>' }];
}

/**
 * Parses assistant output written with special tokens kept (`<|call|>calculator{"expression":"1+2"}<|/call|>`).
 * A final block may miss its `<|/call|>` (generation stopped at `<|end|>`). Arguments must be a JSON object; a
 * malformed block makes the whole text plain content, as vLLM's tool parsers do.
 */
export function parseToolCalls(text: string): ParsedAssistantOutput {
  const first = text.indexOf(OPEN);
  if (first < 0) return { content: text, toolCalls: [], malformed: false };
  const content = text.slice(0, first);
  const toolCalls: ParsedToolCall[] = [];
  let rest = text.slice(first);
  while (rest.length > 0) {
    if (!rest.startsWith(OPEN)) {
      if (rest.trim() === '') break;
      return { content: text, toolCalls: [], malformed: true };
    }
    rest = rest.slice(OPEN.length);
    const end = rest.indexOf(CLOSE);
    const body = (end < 0 ? rest : rest.slice(0, end)).trim();
    rest = end < 0 ? '' : rest.slice(end + CLOSE.length).replace(/^\s+/, '');
    const brace = body.indexOf('{');
    const name = (brace < 0 ? body : body.slice(0, brace)).trim();
    const args = brace < 0 ? '{}' : body.slice(brace).trim();
    if (!NAME.test(name) || !isJsonObject(args)) return { content: text, toolCalls: [], malformed: true };
    toolCalls.push({ name, arguments: args });
  }
  return { content, toolCalls, malformed: false };
}

function isJsonObject(s: string): boolean {
  try {
    const v: unknown = JSON.parse(s);
    return isRecord(v);
  } catch {
    return false;
  }
}
