import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { LLMResult } from '@langchain/core/outputs';
import { context, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import { SPAN_CHAT_COMPLETION, SPAN_COMPLETION } from '@agl/core/semconv';
import {
  recordSpanError,
  agentSpanAttributes,
  contentText,
  fromOpenAiChatRequest,
  fromOpenAiChatResponse,
  getAglTracer,
  isRecordingOff,
  llmRequestAttributes,
  llmResponseAttributes,
  toolSpanAttributes,
  type LlmMessage,
  type LlmResponse,
} from '@agl/core/tracer';
import { isRecord } from '@agl/core/guards';

type Obj = Record<string, unknown>;
const GRAPH_CLASSES = new Set(['CompiledStateGraph', 'CompiledGraph', 'Pregel', 'ReactAgent']);

/** Options of {@link AglCallbackHandler}. */
export interface AglCallbackHandlerOptions {
  /** Tracer to write spans with; default: the AGL tracer (`getAglTracer()`). */
  tracer?: Tracer;
  /** Provider written as `gen_ai.system` when LangChain does not say (default from `ls_provider`, else `openai`). */
  provider?: string;
}

interface RunRecord {
  span: Span;
  /** Name of the agent this run belongs to (its own name when it is an agent span). */
  agent: string | null;
}

/** LangChain message → OpenAI-shaped message. */
export function fromLangChainMessage(message: BaseMessage): LlmMessage {
  const m = message as unknown as Obj & { _getType?: () => string; getType?: () => string };
  const type = m.getType?.() ?? m._getType?.() ?? String(m.type ?? 'human');
  const role =
    type === 'human' ? 'user' : type === 'ai' ? 'assistant' : type === 'generic' ? String(m.role ?? 'user') : type;
  const out: LlmMessage = { role, content: contentText(m.content) };
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isRecord) : [];
  if (calls.length > 0) {
    out.toolCalls = calls.map((c) => ({
      id: String(c.id ?? ''),
      name: String(c.name ?? ''),
      arguments: JSON.stringify(c.args ?? {}),
    }));
    if (out.content === '') out.content = null;
  }
  if (typeof m.tool_call_id === 'string') out.toolCallId = m.tool_call_id;
  return out;
}

/** LangChain `LLMResult` → normalised response (raw body first when `__includeRawResponse` kept it). */
export function fromLangChainResult(output: LLMResult): LlmResponse {
  const generation = output.generations[0]?.[0] as (Obj & { message?: BaseMessage; generationInfo?: Obj }) | undefined;
  const message = generation?.message as unknown as Obj | undefined;
  const kwargs = isRecord(message?.additional_kwargs) ? message.additional_kwargs : {};
  if (isRecord(kwargs.__raw_response) && Array.isArray(kwargs.__raw_response.choices))
    return fromOpenAiChatResponse(kwargs.__raw_response);
  const meta = isRecord(message?.response_metadata) ? message.response_metadata : {};
  const usage = isRecord(message?.usage_metadata) ? message.usage_metadata : {};
  const tokenUsage = isRecord(output.llmOutput?.tokenUsage) ? (output.llmOutput.tokenUsage as Obj) : {};
  const info = generation?.generationInfo ?? {};
  const choice: LlmMessage = message
    ? fromLangChainMessage(message as unknown as BaseMessage)
    : { role: 'assistant', content: String(generation?.text ?? '') };
  choice.role = 'assistant';
  choice.finishReason = String(meta.finish_reason ?? info.finish_reason ?? (choice.toolCalls ? 'tool_calls' : 'stop'));
  const logprobs = isRecord(meta.logprobs) ? meta.logprobs : isRecord(info.logprobs) ? info.logprobs : {};
  const num = (...vs: unknown[]): number | undefined => vs.find((v): v is number => typeof v === 'number');
  return {
    id: typeof message?.id === 'string' ? message.id : undefined,
    model: typeof meta.model_name === 'string' ? meta.model_name : undefined,
    choices: [choice],
    inputTokens: num(usage.input_tokens, tokenUsage.promptTokens),
    outputTokens: num(usage.output_tokens, tokenUsage.completionTokens),
    logprobs: Array.isArray(logprobs.content) ? logprobs.content : undefined,
  };
}

/**
 * A LangChain callback handler that writes AGL spans (DESIGN.md Contract 2): agent spans for graphs and agents
 * (`agent.name`, `gen_ai.agent.name`), `openai.chat.completion` spans for chat-model calls and tool spans, in
 * LangChain's run tree. Pass it in `callbacks`, or let `installAglLangChain()` / the preload register it globally.
 *
 * @example
 * await agent.invoke(input, { callbacks: [new AglCallbackHandler()] });
 */
export class AglCallbackHandler extends BaseCallbackHandler {
  name = 'agl_callback_handler';
  override awaitHandlers = true;
  readonly #runs = new Map<string, RunRecord>();
  readonly #tracer: Tracer | undefined;
  readonly #provider: string | undefined;

  constructor(options: AglCallbackHandlerOptions = {}) {
    super();
    this.#tracer = options.tracer;
    this.#provider = options.provider;
  }

  /** Inside `withoutRecording` (a request `observe` leaves unrecorded), with no tracer of the caller's: do nothing. */
  #off(): boolean {
    return !this.#tracer && isRecordingOff();
  }

  #start(
    name: string,
    runId: string,
    parentRunId: string | undefined,
    attributes: Obj,
    agent: string | null,
    kind = SpanKind.INTERNAL,
  ): void {
    const parent = parentRunId ? this.#runs.get(parentRunId) : undefined;
    const ctx = parent ? trace.setSpan(context.active(), parent.span) : context.active();
    const tracer = this.#tracer ?? getAglTracer().getTracer('@agl/langchain');
    const span = tracer.startSpan(name, { kind, attributes: attributes as Record<string, string> }, ctx);
    this.#runs.set(runId, { span, agent: agent ?? parent?.agent ?? null });
  }

  #end(runId: string, attributes?: Obj, error?: unknown): void {
    const run = this.#runs.get(runId);
    if (!run) return;
    this.#runs.delete(runId);
    if (attributes) run.span.setAttributes(attributes as Record<string, string>);
    if (error !== undefined) recordSpanError(run.span, error);
    run.span.end();
  }

  override handleChainStart(
    chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    metadata?: Obj,
    _runType?: string,
    runName?: string,
  ): void {
    if (this.#off()) return;
    const cls = Array.isArray(chain?.id) ? chain.id[chain.id.length - 1] : undefined;
    const name = runName ?? (typeof chain?.name === 'string' ? chain.name : undefined) ?? String(cls ?? 'chain');
    const parentAgent = parentRunId ? (this.#runs.get(parentRunId)?.agent ?? null) : null;
    const agentName = typeof metadata?.lc_agent_name === 'string' ? metadata.lc_agent_name : undefined;
    const isAgent =
      !parentRunId ||
      (agentName === name && parentAgent !== name) ||
      (GRAPH_CLASSES.has(String(cls)) && parentAgent !== name);
    const attributes: Obj = { 'langchain.run.type': 'chain', 'langchain.chain.name': name };
    if (isAgent) Object.assign(attributes, agentSpanAttributes(agentName && !parentRunId ? agentName : name));
    this.#start(
      isAgent ? `agent ${name}` : `chain ${name}`,
      runId,
      parentRunId,
      attributes,
      isAgent ? String(attributes['agent.name']) : null,
    );
  }

  override handleChainEnd(_outputs: unknown, runId: string): void {
    this.#end(runId);
  }

  override handleChainError(err: unknown, runId: string): void {
    this.#end(runId, undefined, err);
  }

  override handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Obj,
    _tags?: string[],
    metadata?: Obj,
  ): void {
    if (this.#off()) return;
    const params = isRecord(extraParams?.invocation_params) ? extraParams.invocation_params : {};
    const provider = this.#provider ?? (typeof metadata?.ls_provider === 'string' ? metadata.ls_provider : undefined);
    const request = fromOpenAiChatRequest({ ...params, messages: [] }, provider);
    request.model ??= typeof metadata?.ls_model_name === 'string' ? metadata.ls_model_name : undefined;
    request.messages = (messages[0] ?? []).map(fromLangChainMessage);
    void llm;
    this.#start(SPAN_CHAT_COMPLETION, runId, parentRunId, llmRequestAttributes(request), null, SpanKind.CLIENT);
  }

  override handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Obj,
  ): void {
    if (this.#off()) return;
    const params = isRecord(extraParams?.invocation_params) ? extraParams.invocation_params : {};
    const request = fromOpenAiChatRequest(params, this.#provider);
    request.messages = prompts.map((p) => ({ role: 'user', content: p }));
    void llm;
    this.#start(SPAN_COMPLETION, runId, parentRunId, llmRequestAttributes(request), null, SpanKind.CLIENT);
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    if (!this.#runs.has(runId)) return;
    this.#end(runId, llmResponseAttributes(fromLangChainResult(output)));
  }

  override handleLLMError(err: unknown, runId: string): void {
    this.#end(runId, undefined, err);
  }

  override handleToolStart(
    _tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Obj,
    runName?: string,
    toolCallId?: string,
  ): void {
    if (this.#off()) return;
    const name = runName ?? 'tool';
    this.#start(
      `tool ${name}`,
      runId,
      parentRunId,
      toolSpanAttributes({ name, parameters: input, callId: toolCallId ?? null }),
      null,
    );
  }

  override handleToolEnd(output: unknown, runId: string): void {
    if (!this.#runs.has(runId)) return;
    const content = isRecord(output) && 'content' in output ? output.content : output;
    this.#end(runId, { 'tool.output': contentText(content) ?? '' });
  }

  override handleToolError(err: unknown, runId: string): void {
    this.#end(runId, undefined, err);
  }
}
