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
  llmRequestAttributes,
  llmResponseAttributes,
  toolSpanAttributes,
  type LlmSpanAttributes,
} from '@agl/core/tracer';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

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
      return { name: `tool ${data.name}`, kind: SpanKind.INTERNAL, attributes: toolSpanAttributes({ name: data.name }) };
    case 'generation':
    case 'response':
      return { name: SPAN_CHAT_COMPLETION, kind: SpanKind.CLIENT, attributes: {} };
    case 'handoff':
      return { name: 'handoff', kind: SpanKind.INTERNAL, attributes: { 'agents.span.type': 'handoff' } };
    default:
      return { name: `agents.${data.type}`, kind: SpanKind.INTERNAL, attributes: { 'agents.span.type': data.type } };
  }
}

/** Attributes known only when an Agents SDK span ends (LLM payloads, tool input/output, handoff target). */
function endAttributes(data: SpanData, provider: string | undefined): LlmSpanAttributes {
  switch (data.type) {
    case 'generation': {
      const request = fromOpenAiChatRequest({ ...(isObj(data.model_config) ? data.model_config : {}), model: data.model, messages: data.input ?? [] }, provider);
      const raw = data.output?.[0];
      return { ...llmRequestAttributes(request), ...llmResponseAttributes(fromOpenAiChatResponse(raw)) };
    }
    case 'response': {
      const response = isObj(data._response) ? data._response : {};
      const instructions = typeof response.instructions === 'string' ? response.instructions : undefined;
      const request = {
        provider,
        model: typeof response.model === 'string' ? response.model : undefined,
        temperature: typeof response.temperature === 'number' ? response.temperature : undefined,
        messages: fromResponsesItems(data._input, instructions),
        tools: Array.isArray(response.tools)
          ? response.tools.filter(isObj).map((t) => ({ name: String(t.name ?? ''), description: typeof t.description === 'string' ? t.description : undefined, parameters: t.parameters }))
          : undefined,
      };
      return { ...llmRequestAttributes(request), ...llmResponseAttributes(fromOpenAiResponsesResponse(response)) };
    }
    case 'function':
      return { ...toolSpanAttributes({ name: data.name, parameters: data.input }), 'tool.output': String(data.output ?? '') };
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
  readonly #options: AglTraceProcessorOptions;

  constructor(options: AglTraceProcessorOptions = {}) {
    this.#options = options;
  }

  #tracer(): Tracer {
    return this.#options.tracer ?? getAglTracer().getTracer('@agl/openai-agents');
  }

  async onTraceStart(t: Trace): Promise<void> {
    const attributes: LlmSpanAttributes = { 'agents.trace.id': t.traceId, 'agents.workflow.name': t.name };
    if (t.groupId) attributes['agents.group.id'] = t.groupId;
    this.#spans.set(t.traceId, this.#tracer().startSpan(`workflow ${t.name}`, { attributes }, context.active()));
  }

  async onTraceEnd(t: Trace): Promise<void> {
    this.#spans.get(t.traceId)?.end();
    this.#spans.delete(t.traceId);
  }

  async onSpanStart(span: AgentsSpan<SpanData>): Promise<void> {
    const parent = this.#spans.get(span.parentId ?? span.traceId);
    const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
    const { name, kind, attributes } = describe(span.spanData);
    this.#spans.set(span.spanId, this.#tracer().startSpan(name, { kind, attributes }, ctx));
  }

  async onSpanEnd(span: AgentsSpan<SpanData>): Promise<void> {
    const otel = this.#spans.get(span.spanId);
    if (!otel) return;
    this.#spans.delete(span.spanId);
    otel.setAttributes(endAttributes(span.spanData, this.#options.provider));
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
