import { parseAglTinyToolCalls } from '@agl/tinker';
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

/** The template segments of one tool call: `<|call|>name{args}<|/call|>`. */
export function formatToolCall(name: string, args: string): TextSegment[] {
  return [{ special: '<|call|>' }, { text: `${name}${args.trim() === '' ? '{}' : args}` }, { special: '<|/call|>' }];
}

/**
 * Parses assistant output written with special tokens kept (`<|call|>calculator{"expression":"1+2"}<|/call|>`).
 * A final block may miss its `<|/call|>` (generation stopped at `<|end|>`). Arguments must be a JSON object; a
 * malformed block makes the whole text plain content, as vLLM's tool parsers do. The one parser of this format is
 * `@agl/tinker`'s (the gateway's Tinker mode parses the policy's samples with it too).
 */
export function parseToolCalls(text: string): ParsedAssistantOutput {
  const { content, calls } = parseAglTinyToolCalls(text, () => '');
  const toolCalls = calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments }));
  return { content, toolCalls, malformed: toolCalls.length === 0 && text.includes(OPEN) };
}
