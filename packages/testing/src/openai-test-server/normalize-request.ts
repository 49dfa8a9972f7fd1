import type { IncomingHttpHeaders } from 'node:http';
import type { TestLlmApi, TestLlmMessage, TestLlmRequest, TestLlmTool } from './types';
import { isRecord } from '@agl/core/guards';

type Obj = Record<string, unknown>;

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

/** Text of an OpenAI/Anthropic content value: a string or a list of parts with `text`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) =>
        isRecord(p)
          ? typeof p.text === 'string'
            ? p.text
            : typeof p.content === 'string'
              ? p.content
              : isRecord(p) && Array.isArray(p.content)
                ? contentText(p.content)
                : ''
          : str(p),
      )
      .join('');
  }
  return str(content);
}

function chatMessages(body: Obj): TestLlmMessage[] {
  const raw = Array.isArray(body.messages) ? body.messages : [];
  return raw.filter(isRecord).map((m) => {
    const msg: TestLlmMessage = { role: str(m.role), content: contentText(m.content) };
    if (typeof m.tool_call_id === 'string') msg.toolCallId = m.tool_call_id;
    if (typeof m.name === 'string') msg.name = m.name;
    if (isRecord(m.function_call))
      msg.toolCalls = [{ id: '', name: str(m.function_call.name), arguments: str(m.function_call.arguments) }];
    if (Array.isArray(m.tool_calls)) {
      msg.toolCalls = m.tool_calls.filter(isRecord).map((c) => {
        const fn = isRecord(c.function) ? c.function : {};
        return { id: str(c.id), name: str(fn.name), arguments: str(fn.arguments) };
      });
    }
    return msg;
  });
}

function chatTools(body: Obj): TestLlmTool[] {
  const raw = Array.isArray(body.tools) ? body.tools : Array.isArray(body.functions) ? body.functions : [];
  return raw.filter(isRecord).map((t) => {
    const fn = isRecord(t.function) ? t.function : t;
    return {
      name: str(fn.name),
      description: typeof fn.description === 'string' ? fn.description : undefined,
      parameters: fn.parameters ?? fn.input_schema,
    };
  });
}

function responsesMessages(body: Obj): TestLlmMessage[] {
  const out: TestLlmMessage[] = [];
  if (typeof body.instructions === 'string') out.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') {
    out.push({ role: 'user', content: body.input });
    return out;
  }
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (!isRecord(item)) continue;
    if (item.type === 'function_call_output') {
      out.push({ role: 'tool', content: contentText(item.output), toolCallId: str(item.call_id) });
    } else if (item.type === 'function_call') {
      out.push({
        role: 'assistant',
        content: '',
        toolCalls: [{ id: str(item.call_id), name: str(item.name), arguments: str(item.arguments) }],
      });
    } else if (typeof item.role === 'string') {
      out.push({ role: item.role === 'developer' ? 'system' : item.role, content: contentText(item.content) });
    }
  }
  return out;
}

function anthropicMessages(body: Obj): TestLlmMessage[] {
  const out: TestLlmMessage[] = [];
  if (body.system !== undefined) out.push({ role: 'system', content: contentText(body.system) });
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(m)) continue;
    if (typeof m.content === 'string') {
      out.push({ role: str(m.role), content: m.content });
      continue;
    }
    const parts = Array.isArray(m.content) ? m.content.filter(isRecord) : [];
    const text = parts
      .filter((p) => p.type === 'text')
      .map((p) => str(p.text))
      .join('');
    const toolUses = parts.filter((p) => p.type === 'tool_use');
    for (const r of parts.filter((p) => p.type === 'tool_result')) {
      out.push({ role: 'tool', content: contentText(r.content), toolCallId: str(r.tool_use_id) });
    }
    if (text || toolUses.length > 0 || parts.length === 0) {
      const msg: TestLlmMessage = { role: str(m.role), content: text };
      if (toolUses.length > 0)
        msg.toolCalls = toolUses.map((u) => ({
          id: str(u.id),
          name: str(u.name),
          arguments: JSON.stringify(u.input ?? {}),
        }));
      out.push(msg);
    }
  }
  return out;
}

/** Normalise a request body of any supported API into a {@link TestLlmRequest}. */
export function normalizeRequest(
  api: TestLlmApi,
  body: Obj,
  headers: IncomingHttpHeaders,
  path: string,
): TestLlmRequest {
  const base = { api, model: str(body.model) || 'test-model', stream: body.stream === true, body, headers, path };
  switch (api) {
    case 'chat':
      return { ...base, messages: chatMessages(body), tools: chatTools(body) };
    case 'completion':
      return { ...base, messages: [{ role: 'user', content: contentText(body.prompt) }], tools: [] };
    case 'responses':
      return { ...base, messages: responsesMessages(body), tools: chatTools(body) };
    case 'anthropic':
      return { ...base, messages: anthropicMessages(body), tools: chatTools(body) };
  }
}
