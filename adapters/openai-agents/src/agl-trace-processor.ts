import type { Span as AgentsSpan, SpanData, Trace, TracingProcessor } from '@openai/agents';
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import {
  agentSpanAttributes,
  fromOpenAiChatRequest,
  fromOpenAiChatResponse,
  fromOpenAiResponsesResponse,
  fromResponsesItems,
  getAglTracer,
  isRecordingOff,
  llmRequestAttributes,
  llmResponseAttributes,
  toolSpanAttributes,
  type LlmResponse,
  type LlmSpanAttributes,
  type LlmToolCall,
} from '@agl/core/tracer';
import { isRecord } from '@agl/core/guards';

/** Options of {@link AglTraceProcessor}. */
export interface AglTraceProcessorOptions {
  /** Tracer to write spans with; default: the AGL tracer (`getAglTracer()`). */
  tracer?: Tracer;
  /** Provider written as `gen_ai.system` (default `openai`). */
  provider?: string;
}

/** Span name and start attributes of an Agents SDK span. */
function describe(data: SpanData): { name: string; kind: SpanKind; attributes: LlmSpanAttributes } {
  switch (data.type) {
    case 'agent':
      return { name: `agent ${data.name}`, kind: SpanKind.INTERNAL, attributes: agentSpanAttributes(data.name) };
    case 'function':
      return {
        name: `tool ${data.name}`,
        kind: SpanKind.INTERNAL,
        attributes: toolSpanAttributes({ name: data.name }),
      };
    case 'generation':
    case 'response':
      return { name: SPAN_CHAT_COMPLETION, kind: SpanKind.CLIENT, attributes: {} };
    case 'handoff':
      return { name: 'handoff', kind: SpanKind.INTERNAL, attributes: { 'agents.span.type': 'handoff' } };
    default:
      return { name: `agents.${data.type}`, kind: SpanKind.INTERNAL, attributes: { 'agents.span.type': data.type } };
  }
}

/** What an LLM span (generation or response) ends with: its attributes and the tool calls it made. */
function llmEnd(
  data: SpanData,
  provider: string | undefined,
  systemPrompt: () => string | undefined,
): { attributes: LlmSpanAttributes; toolCalls: LlmToolCall[] } | undefined {
  let request;
  let response: LlmResponse;
  if (data.type === 'generation') {
    request = fromOpenAiChatRequest(
      { ...(isRecord(data.model_config) ? data.model_config : {}), model: data.model, messages: data.input ?? [] },
      provider,
    );
    response = fromOpenAiChatResponse(data.output?.[0]);
  } else if (data.type === 'response') {
    const raw = isRecord(data._response) ? data._response : {};
    // The Responses API echoes `instructions` only on some servers; else the agent's system prompt (noted per span).
    const instructions =
      typeof raw.instructions === 'string' && raw.instructions !== '' ? raw.instructions : systemPrompt();
    request = {
      provider,
      model: typeof raw.model === 'string' ? raw.model : undefined,
      temperature: typeof raw.temperature === 'number' ? raw.temperature : undefined,
      messages: fromResponsesItems(data._input, instructions),
      tools: Array.isArray(raw.tools)
        ? raw.tools.filter(isRecord).map((t) => ({
            name: String(t.name ?? ''),
            description: typeof t.description === 'string' ? t.description : undefined,
            parameters: t.parameters,
          }))
        : undefined,
    };
    response = fromOpenAiResponsesResponse(raw);
  } else return undefined;
  const toolCalls = response.choices.flatMap((c) => c.toolCalls ?? []);
  return { attributes: { ...llmRequestAttributes(request), ...llmResponseAttributes(response) }, toolCalls };
}

/** Attributes known only when a non-LLM Agents SDK span ends (tool input/output, handoff target). */
function endAttributes(data: SpanData, toolCallId: string | undefined): LlmSpanAttributes {
  switch (data.type) {
    case 'function':
      return {
        ...toolSpanAttributes({ name: data.name, parameters: data.input, callId: toolCallId }),
        'tool.output': String(data.output ?? ''),
      };
    case 'handoff':
      return { 'handoff.from_agent': data.from_agent ?? '', 'handoff.to_agent': data.to_agent ?? '' };
    default:
      return {};
  }
}

/**
 * An OpenAI Agents SDK `TracingProcessor` that writes AGL spans (DESIGN.md Contract 2): agent spans (`agent.name`,
 * `gen_ai.agent.name`), `openai.chat.completion` spans for generation (Chat Completions) and response (Responses API)
 * spans, tool spans for function spans, and handoff spans, in the SDK's span tree.
 */
export class AglTraceProcessor implements TracingProcessor {
  readonly #spans = new Map<string, Span>();
  /** SDK span id → its parent's (span or trace) id, for spans still open. */
  readonly #parents = new Map<string, string>();
  /** SDK span id → the system prompt an agent computed under it. */
  readonly #systemPrompts = new Map<string, string>();
  /** SDK trace id → tool calls the model made that no tool span has claimed yet. */
  readonly #toolCalls = new Map<string, LlmToolCall[]>();
  readonly #options: AglTraceProcessorOptions;

  constructor(options: AglTraceProcessorOptions = {}) {
    this.#options = options;
  }

  /** Inside `withoutRecording` (a request `observe` leaves unrecorded), with no tracer of the caller's: do nothing. */
  #off(): boolean {
    return !this.#options.tracer && isRecordingOff();
  }

  #tracer(): Tracer {
    return this.#options.tracer ?? getAglTracer().getTracer('@agl/openai-agents');
  }

  async onTraceStart(t: Trace): Promise<void> {
    if (this.#off()) return;
    const attributes: LlmSpanAttributes = { 'agents.trace.id': t.traceId, 'agents.workflow.name': t.name };
    if (t.groupId) attributes['agents.group.id'] = t.groupId;
    this.#spans.set(t.traceId, this.#tracer().startSpan(`workflow ${t.name}`, { attributes }, context.active()));
  }

  async onTraceEnd(t: Trace): Promise<void> {
    this.#spans.get(t.traceId)?.end();
    this.#spans.delete(t.traceId);
    this.#toolCalls.delete(t.traceId);
  }

  /**
   * Notes the system prompt an agent computed while `spanId` was the SDK's current span; LLM spans below it whose
   * response does not echo `instructions` (Responses API) take it. `addAglTraceProcessor()` calls this from
   * `Agent.getSystemPrompt`.
   */
  noteSystemPrompt(spanId: string, prompt: string): void {
    if (this.#off()) return;
    this.#systemPrompts.set(spanId, prompt);
  }

  #systemPromptAbove(spanId: string): string | undefined {
    for (let id = this.#parents.get(spanId); id !== undefined; id = this.#parents.get(id)) {
      const prompt = this.#systemPrompts.get(id);
      if (prompt !== undefined) return prompt;
    }
    return undefined;
  }

  /** The id of the model's tool call a function span ran: same name, same arguments when the SDK kept them. */
  #claimToolCall(traceId: string, name: string, input: string): string | undefined {
    const pending = this.#toolCalls.get(traceId) ?? [];
    let i = pending.findIndex((c) => c.name === name && c.arguments === input);
    if (i < 0) i = pending.findIndex((c) => c.name === name);
    return i < 0 ? undefined : pending.splice(i, 1)[0]?.id;
  }

  async onSpanStart(span: AgentsSpan<SpanData>): Promise<void> {
    if (this.#off()) return;
    this.#parents.set(span.spanId, span.parentId ?? span.traceId);
    const parent = this.#spans.get(span.parentId ?? span.traceId);
    const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
    const { name, kind, attributes } = describe(span.spanData);
    this.#spans.set(span.spanId, this.#tracer().startSpan(name, { kind, attributes }, ctx));
  }

  async onSpanEnd(span: AgentsSpan<SpanData>): Promise<void> {
    const otel = this.#spans.get(span.spanId);
    if (!otel) return;
    this.#spans.delete(span.spanId);
    const data = span.spanData;
    const llm = llmEnd(data, this.#options.provider, () => this.#systemPromptAbove(span.spanId));
    if (llm) {
      otel.setAttributes(llm.attributes);
      const pending = this.#toolCalls.get(span.traceId) ?? [];
      this.#toolCalls.set(span.traceId, [...pending, ...llm.toolCalls]);
    } else {
      const callId = data.type === 'function' ? this.#claimToolCall(span.traceId, data.name, data.input) : undefined;
      otel.setAttributes(endAttributes(data, callId));
    }
    this.#parents.delete(span.spanId);
    this.#systemPrompts.delete(span.spanId);
    if (span.error) {
      otel.setStatus({ code: SpanStatusCode.ERROR, message: span.error.message });
      otel.setAttribute('agents.error', JSON.stringify(span.error));
    }
    otel.end();
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
  }

  async forceFlush(): Promise<void> {
    if (!this.#options.tracer) await getAglTracer().forceFlush();
  }
}
