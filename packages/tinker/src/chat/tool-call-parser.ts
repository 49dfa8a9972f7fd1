import type { ChatToolCall, ParsedAssistant, ToolCallFormat } from './chat-types';
import { jsonMemberText } from './json-value-text';

const TOOL_CALL_BLOCK = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;
const PYTHON_TAG = '<|python_tag|>';

/** Options of {@link parseAssistantOutput}. */
export interface ParseAssistantOptions {
  /** How the model writes tool calls (from its chat template); `hermes` also covers Qwen3. */
  format: ToolCallFormat;
  /** Whether generation ended on a stop token (`false` gives finish reason `length`). Default true. */
  stopped?: boolean;
  /** Makes tool-call ids; default `call_<index>_<random>`. */
  callId?: (index: number) => string;
}

function defaultCallId(index: number): string {
  return `call_${index}_${Math.random().toString(36).slice(2, 12)}`;
}

/** One `{"name": …, "arguments"|"parameters": …}` object as an OpenAI tool call, or null when it is not one. */
function toolCallOf(json: string, index: number, callId: (i: number) => string): ChatToolCall | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const record = parsed as Record<string, unknown>;
  if (typeof record.name !== 'string') return null;
  const key = 'arguments' in record ? 'arguments' : 'parameters' in record ? 'parameters' : null;
  let args = '{}';
  if (key !== null) {
    const value = record[key];
    // A string value is already the arguments' JSON text (some models write it so); otherwise keep the model's text.
    args = typeof value === 'string' ? value : (jsonMemberText(json.trim(), key) ?? JSON.stringify(value));
  }
  return { id: callId(index), type: 'function', function: { name: record.name, arguments: args } };
}

/** Splits `<think>…</think>` off the front of a Qwen3-style output. */
function splitThinking(text: string): { reasoning: string | null; rest: string } {
  const close = text.indexOf('</think>');
  if (close < 0) return { reasoning: null, rest: text };
  const before = text.slice(0, close);
  const open = before.indexOf('<think>');
  const reasoning = (open >= 0 ? before.slice(open + '<think>'.length) : before).replace(/^\n+|\n+$/g, '');
  return { reasoning, rest: text.slice(close + '</think>'.length).replace(/^\n+/, '') };
}

function parseHermes(text: string, callId: (i: number) => string): { content: string; calls: ChatToolCall[] } {
  const calls: ChatToolCall[] = [];
  let content = text;
  const first = text.indexOf('<tool_call>');
  if (first < 0) return { content, calls };
  for (const match of text.matchAll(TOOL_CALL_BLOCK)) {
    const call = toolCallOf(match[1] as string, calls.length, callId);
    if (call === null) return { content: text, calls: [] };
    calls.push(call);
  }
  if (calls.length > 0) content = text.slice(0, first).replace(/\n+$/, '');
  return { content, calls };
}

function parseLlama3(text: string, callId: (i: number) => string): { content: string; calls: ChatToolCall[] } {
  let body = text.trim();
  if (body.startsWith(PYTHON_TAG)) body = body.slice(PYTHON_TAG.length).trim();
  if (!body.startsWith('{')) return { content: text, calls: [] };
  // Llama 3.x writes one JSON object, or several separated by ";".
  const calls: ChatToolCall[] = [];
  for (const part of splitTopLevel(body, ';')) {
    const call = toolCallOf(part, calls.length, callId);
    if (call === null) return { content: text, calls: [] };
    calls.push(call);
  }
  return { content: '', calls };
}

/** Splits on `sep` outside JSON strings and brackets. */
function splitTopLevel(text: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === sep && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last !== '') parts.push(last);
  return parts;
}

const AGL_CALL_OPEN = '<|call|>';
const AGL_CALL_CLOSE = '<|/call|>';
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * The embedded policy's (`agl-tiny`) calls: `<|call|>name{json args}<|/call|>` after the content; a final block may
 * miss its close (sampling stopped at `<|end|>`). Arguments must be a JSON object, kept as written; a malformed block
 * makes the whole text content, as `@agl/tiny-llm`'s own chat route does.
 */
export function parseAglTinyToolCalls(
  text: string,
  callId: (i: number) => string = defaultCallId,
): { content: string; calls: ChatToolCall[] } {
  const first = text.indexOf(AGL_CALL_OPEN);
  if (first < 0) return { content: text, calls: [] };
  const calls: ChatToolCall[] = [];
  let rest = text.slice(first);
  while (rest.trim() !== '') {
    if (!rest.startsWith(AGL_CALL_OPEN)) return { content: text, calls: [] };
    rest = rest.slice(AGL_CALL_OPEN.length);
    const end = rest.indexOf(AGL_CALL_CLOSE);
    const body = (end < 0 ? rest : rest.slice(0, end)).trim();
    rest = end < 0 ? '' : rest.slice(end + AGL_CALL_CLOSE.length).replace(/^\s+/, '');
    const brace = body.indexOf('{');
    const name = (brace < 0 ? body : body.slice(0, brace)).trim();
    const args = brace < 0 ? '{}' : body.slice(brace).trim();
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return { content: text, calls: [] };
    }
    if (!TOOL_NAME.test(name) || typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { content: text, calls: [] };
    calls.push({ id: callId(calls.length), type: 'function', function: { name, arguments: args } });
  }
  return { content: text.slice(0, first), calls };
}

/**
 * Turns a model's decoded output (stop token removed) into an OpenAI assistant message: a leading `<think>` block
 * becomes `reasoning_content`, Qwen3/Hermes `<tool_call>{…}</tool_call>` blocks and Llama 3.x JSON calls
 * (`{"name": …, "parameters": …}`, optionally after `<|python_tag|>`, several separated by `;`) and the embedded
 * policy's `<|call|>name{…}<|/call|>` blocks become `tool_calls`.
 * Text that only looks like a call but is not valid JSON stays content.
 */
export function parseAssistantOutput(text: string, options: ParseAssistantOptions): ParsedAssistant {
  const callId = options.callId ?? defaultCallId;
  const { reasoning, rest } = splitThinking(text);
  let parsed: { content: string; calls: ChatToolCall[] } = { content: rest, calls: [] };
  if (options.format === 'hermes' || (options.format !== 'none' && rest.includes('<tool_call>')))
    parsed = parseHermes(rest, callId);
  if (parsed.calls.length === 0 && options.format === 'llama3-json') parsed = parseLlama3(rest, callId);
  if (options.format === 'agl-tiny') parsed = parseAglTinyToolCalls(rest, callId);
  const message: ParsedAssistant['message'] = {
    role: 'assistant',
    content: parsed.calls.length > 0 && parsed.content === '' ? null : parsed.content,
  };
  if (reasoning !== null) message.reasoning_content = reasoning;
  if (parsed.calls.length > 0) message.tool_calls = parsed.calls;
  const finishReason = options.stopped === false ? 'length' : parsed.calls.length > 0 ? 'tool_calls' : 'stop';
  return { message, finishReason };
}
