import { AsyncLocalStorage } from 'node:async_hooks';
import { asSchema, registerTelemetryIntegration, type TelemetryIntegration } from 'ai';
import { context, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import {
  agentSpanAttributes,
  contentText,
  fromOpenAiChatRequest,
  fromOpenAiChatResponse,
  fromOpenAiResponsesRequest,
  fromOpenAiResponsesResponse,
  getAglTracer,
  isRecordingOff,
  llmRequestAttributes,
  llmResponseAttributes,
  recordSpanError,
  toolSpanAttributes,
  type LlmMessage,
  type LlmRequest,
  type LlmResponse,
  type LlmToolDefinition,
} from '@agl/core/tracer';
import { isRecord } from '@agl/core/guards';

type Obj = Record<string, unknown>;

/** Options of {@link createAglTelemetryIntegration}. */
export interface AglTelemetryOptions {
  /** Tracer to write spans with; default: the AGL tracer (`getAglTracer()`). */
  tracer?: Tracer;
  /** Agent name when the call has no `experimental_telemetry.functionId` (default `ai-agent`). */
  defaultAgentName?: string;
}

interface CallState {
  agent: Span;
  parent: CallState | undefined;
  step: Span | undefined;
  tools: Map<string, Span>;
  done: boolean;
  /** The error of a step that failed (AI SDK 7 `onStepError`): the call ends with it. */
  stepError?: unknown;
}

/** The innermost call still running in this async context (a finished one may linger in the store). */
function live(state: CallState | undefined): CallState | undefined {
  let s = state;
  while (s?.done) s = s.parent;
  return s;
}

/** The error of a step whose model call failed inside `streamText` (which reports it to `onError` only). */
const STEP_FAILED = "The model call of this step failed before the step finished (see the call's onError).";

const calls = new AsyncLocalStorage<CallState>();
const open: CallState[] = [];

/** One `generateText` / `streamText` call run through the `@agl/vercel-ai/ai` wrapper: its state, once started. */
export interface CallFrame {
  state?: CallState;
}

const frames = new AsyncLocalStorage<CallFrame>();

/** Runs one AI SDK call in a fresh frame, so that {@link failCall} can close that call's spans when it fails. */
export function withCallFrame<T>(fn: (frame: CallFrame) => T): T {
  const frame: CallFrame = {};
  return frames.run(frame, () => fn(frame));
}

/**
 * Ends the spans a failed call left open (its tools, its step, its agent) with the error, and forgets the call, so no
 * later call takes it as a parent. AI SDK 6 telemetry integrations get no event when a call throws.
 */
export function failCall(frame: CallFrame, error: unknown): void {
  if (frame.state) close(frame.state, error);
}

function close(state: CallState, error?: unknown): void {
  if (state.done) return;
  endSpan(state.step, error);
  state.step = undefined;
  for (const span of state.tools.values()) endSpan(span, error);
  state.tools.clear();
  endSpan(state.agent, error);
  state.done = true;
  open.splice(open.indexOf(state), 1);
}

/** AI SDK `ModelMessage`s (plus the system prompt) → OpenAI-shaped messages. */
export function fromModelMessages(system: unknown, messages: readonly unknown[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  if (typeof system === 'string' && system !== '') out.push({ role: 'system', content: system });
  for (const m of messages.filter(isRecord)) {
    const role = String(m.role ?? 'user');
    const parts = Array.isArray(m.content) ? m.content.filter(isRecord) : [];
    if (role === 'tool') {
      for (const p of parts.filter((p) => p.type === 'tool-result')) {
        const output = isRecord(p.output) ? p.output.value : p.output;
        out.push({
          role: 'tool',
          content: typeof output === 'string' ? output : JSON.stringify(output),
          toolCallId: String(p.toolCallId ?? ''),
        });
      }
      continue;
    }
    const calls = parts.filter((p) => p.type === 'tool-call');
    const text = typeof m.content === 'string' ? m.content : contentText(parts.filter((p) => p.type === 'text'));
    const msg: LlmMessage = { role, content: calls.length > 0 && !text ? null : (text ?? '') };
    if (calls.length > 0) {
      msg.toolCalls = calls.map((c) => ({
        id: String(c.toolCallId ?? ''),
        name: String(c.toolName ?? ''),
        arguments: JSON.stringify(c.input ?? {}),
      }));
    }
    out.push(msg);
  }
  return out;
}

function toolDefinitions(tools: unknown): LlmToolDefinition[] | undefined {
  if (!isRecord(tools)) return undefined;
  return Object.entries(tools).map(([name, t]) => {
    const def: LlmToolDefinition = { name };
    if (isRecord(t) && typeof t.description === 'string') def.description = t.description;
    try {
      if (isRecord(t) && t.inputSchema)
        def.parameters = asSchema(t.inputSchema as Parameters<typeof asSchema>[0]).jsonSchema;
    } catch {
      // Schema not convertible: leave parameters out.
    }
    return def;
  });
}

function parseBody(body: unknown): Obj | undefined {
  if (isRecord(body)) return body;
  if (typeof body !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The step's response: the raw provider body when it is OpenAI-shaped (token ids kept), else the SDK's view. */
function stepResponse(step: Obj): LlmResponse {
  const response = isRecord(step.response) ? step.response : {};
  const body = parseBody(response.body);
  if (body && Array.isArray(body.choices)) return fromOpenAiChatResponse(body);
  if (body && Array.isArray(body.output)) return fromOpenAiResponsesResponse(body);
  const content = Array.isArray(step.content) ? step.content.filter(isRecord) : [];
  const toolCalls = content.filter((p) => p.type === 'tool-call');
  const text = typeof step.text === 'string' ? step.text : '';
  const usage = isRecord(step.usage) ? step.usage : {};
  const metadata =
    isRecord(step.providerMetadata) && isRecord(step.providerMetadata.openai) ? step.providerMetadata.openai : {};
  const message: LlmMessage = { role: 'assistant', content: toolCalls.length > 0 && !text ? null : text };
  if (toolCalls.length > 0) {
    message.toolCalls = toolCalls.map((c) => ({
      id: String(c.toolCallId ?? ''),
      name: String(c.toolName ?? ''),
      arguments: JSON.stringify(c.input ?? {}),
    }));
  }
  const finish = String(step.rawFinishReason ?? step.finishReason ?? 'stop');
  message.finishReason = finish === 'tool-calls' ? 'tool_calls' : finish;
  return {
    id: typeof response.id === 'string' ? response.id : undefined,
    model: typeof response.modelId === 'string' ? response.modelId : undefined,
    choices: [message],
    inputTokens: typeof usage.inputTokens === 'number' ? usage.inputTokens : undefined,
    outputTokens: typeof usage.outputTokens === 'number' ? usage.outputTokens : undefined,
    logprobs: Array.isArray(metadata.logprobs) ? metadata.logprobs : undefined,
  };
}

function stepRequest(step: Obj, provider: string | undefined): LlmRequest | undefined {
  const body = parseBody(isRecord(step.request) ? step.request.body : undefined);
  if (body && Array.isArray(body.messages)) return fromOpenAiChatRequest(body, provider);
  if (body && body.input !== undefined) return fromOpenAiResponsesRequest(body, provider);
  return undefined;
}

function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  // No stack read: reading `error.stack` before Node prints an uncaught error changes what it prints.
  if (error !== undefined) recordSpanError(span, error);
  span.end();
}

/**
 * Builds the AI SDK telemetry integration that writes AGL spans (DESIGN.md Contract 2): one agent span per
 * `generateText` / `streamText` call (`agent.name` = `experimental_telemetry.functionId`, else `defaultAgentName`),
 * an `openai.chat.completion` span per step (raw provider body when available, so vLLM token ids survive) and a tool
 * span per tool execution.
 */
export function createAglTelemetryIntegration(options: AglTelemetryOptions = {}): TelemetryIntegration {
  const tracer = (): Tracer => options.tracer ?? getAglTracer().getTracer('@agl/vercel-ai');
  const current = (): CallState | undefined => live(calls.getStore()) ?? open[open.length - 1];
  const v6 = {
    onStart(event: { functionId?: string }) {
      // AI SDK 7 also starts embed / rerank / object / speech operations here: only text calls are agent runs.
      const operation = (event as unknown as Obj).operationId;
      if (typeof operation === 'string' && !TEXT_OPERATION.test(operation)) return;
      const parent = live(calls.getStore());
      const parentSpan = parent ? ([...parent.tools.values()].at(-1) ?? parent.agent) : undefined;
      const ctx = parentSpan ? trace.setSpan(context.active(), parentSpan) : context.active();
      const name = event.functionId ?? options.defaultAgentName ?? 'ai-agent';
      const agent = tracer().startSpan(`agent ${name}`, { attributes: agentSpanAttributes(name) }, ctx);
      const state: CallState = { agent, parent, step: undefined, tools: new Map(), done: false };
      const frame = frames.getStore();
      if (frame && !frame.state) frame.state = state;
      open.push(state);
      calls.enterWith(state);
    },
    onStepStart(event: unknown) {
      const state = current();
      if (!state) return;
      // AI SDK 6: `model` and `system`; AI SDK 7: `provider`, `modelId` and `instructions`.
      const e = event as unknown as Obj;
      const model = isRecord(e.model) ? e.model : e;
      const request: LlmRequest = {
        provider: String(model.provider ?? '').split('.')[0],
        model: String(model.modelId ?? ''),
        messages: fromModelMessages(
          systemText(e.system ?? e.instructions),
          Array.isArray(e.messages) ? (e.messages as unknown[]) : [],
        ),
        tools: toolDefinitions(e.tools),
      };
      const ctx = trace.setSpan(context.active(), state.agent);
      state.step = tracer().startSpan(
        SPAN_CHAT_COMPLETION,
        { kind: SpanKind.CLIENT, attributes: llmRequestAttributes(request) },
        ctx,
      );
    },
    onStepFinish(event: unknown) {
      const state = current();
      if (!state?.step) return;
      const step = event as Obj;
      const model = isRecord(step.model) ? step.model : {};
      const request = stepRequest(step, String(model.provider ?? '').split('.')[0]);
      if (request) state.step.setAttributes(llmRequestAttributes(request));
      state.step.setAttributes(llmResponseAttributes(stepResponse(step)));
      endSpan(state.step);
      state.step = undefined;
    },
    onToolCallStart(event: unknown) {
      const state = current();
      if (!state) return;
      const call = (event as { toolCall: unknown }).toolCall as Obj;
      const name = String(call.toolName ?? 'tool');
      const ctx = trace.setSpan(context.active(), state.agent);
      const attributes = toolSpanAttributes({
        name,
        parameters: call.input ?? {},
        callId: String(call.toolCallId ?? ''),
      });
      state.tools.set(String(call.toolCallId ?? name), tracer().startSpan(`tool ${name}`, { attributes }, ctx));
    },
    onToolCallFinish(event: { toolCall: unknown; success: boolean; output?: unknown; error?: unknown }) {
      const state = current();
      const call = (event as { toolCall: unknown }).toolCall as Obj;
      const key = String(call.toolCallId ?? call.toolName ?? 'tool');
      const span = state?.tools.get(key);
      if (!state || !span) return;
      state.tools.delete(key);
      if (event.success)
        span.setAttribute(
          'tool.output',
          typeof event.output === 'string' ? event.output : JSON.stringify(event.output ?? null),
        );
      endSpan(span, event.success ? undefined : event.error);
    },
    onFinish(): void {
      const state = current();
      // A step still open here never finished: its model call failed, and `streamText` reported the error to its
      // `onError` and finished anyway. Close the step and the agent with an error.
      if (state) close(state, state.stepError ?? (state.step ? new Error(STEP_FAILED) : undefined));
    },
  };
  return skippedWhenNotRecording(options, { ...v6, ...aiSdk7Callbacks(v6, current) } as TelemetryIntegration);
}

/** `generateText` / `streamText` (and the agents built on them): the AI SDK 7 operations traced as agent runs. */
const TEXT_OPERATION = /generateText|streamText|agent/i;

/** The system prompt as text: AI SDK 6 `system` (a string), AI SDK 7 `instructions` (a string or system messages). */
function systemText(system: unknown): string | undefined {
  if (typeof system === 'string') return system;
  const messages = Array.isArray(system) ? system : isRecord(system) ? [system] : [];
  const text = messages
    .filter(isRecord)
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');
  return text === '' ? undefined : text;
}

type V6Callbacks = Record<
  'onStart' | 'onStepStart' | 'onStepFinish' | 'onToolCallStart' | 'onToolCallFinish' | 'onFinish',
  (event: never) => void
>;

/**
 * The AI SDK 7 callbacks (`registerTelemetry`'s event model), mapped onto the AI SDK 6 ones: both SDKs read the same
 * global integration list, and each calls only the names it knows (7 calls `onStepFinish` as a deprecated alias of
 * `onStepEnd`). AI SDK 7 also reports failures (`onStepError`, `onError`, `onAbort`), which 6 does not.
 */
function aiSdk7Callbacks(v6: V6Callbacks, current: () => CallState | undefined): Obj {
  const call = v6 as unknown as Record<keyof V6Callbacks, (event: unknown) => void>;
  return {
    onToolExecutionStart: (event: Obj) => call.onToolCallStart(event),
    onToolExecutionEnd: (event: Obj) => {
      const output = isRecord(event.toolOutput) ? event.toolOutput : {};
      const success = output.type !== 'tool-error';
      call.onToolCallFinish({ toolCall: event.toolCall, success, output: output.output, error: output.error });
    },
    onStepError: (event: Obj) => {
      const state = current();
      if (!state) return;
      state.stepError = event.error ?? new Error(STEP_FAILED);
      endSpan(state.step, state.stepError);
      state.step = undefined;
    },
    onEnd: (event: Obj) => {
      if (typeof event.operationId === 'string' && !TEXT_OPERATION.test(event.operationId)) return;
      call.onFinish(event);
    },
    onError: (event: unknown) => {
      const state = current();
      if (state) close(state, isRecord(event) && 'error' in event ? event.error : event);
    },
    onAbort: () => {
      const state = current();
      if (state) close(state, new Error('The call was aborted.'));
    },
  };
}

/**
 * The integration with every callback skipped inside `withoutRecording` (a request `observe` leaves unrecorded), unless
 * the caller passed its own tracer: no span, no call state (which a recorded call could otherwise pick up).
 */
function skippedWhenNotRecording(
  options: AglTelemetryOptions,
  integration: TelemetryIntegration,
): TelemetryIntegration {
  if (options.tracer) return integration;
  const skipped: Record<string, unknown> = {};
  for (const [name, callback] of Object.entries(integration)) {
    skipped[name] =
      typeof callback === 'function'
        ? (...args: unknown[]) => (isRecordingOff() ? undefined : (callback as (...a: unknown[]) => unknown)(...args))
        : callback;
  }
  return skipped as TelemetryIntegration;
}

let registered: TelemetryIntegration | null = null;

/**
 * Registers the AGL integration globally (`registerTelemetryIntegration`): every `generateText` / `streamText` call
 * in the process is traced with no per-call flag. Idempotent; returns the integration.
 *
 * @example
 * registerAglTelemetry();
 */
export function registerAglTelemetry(options: AglTelemetryOptions = {}): TelemetryIntegration {
  if (registered) return registered;
  registered = createAglTelemetryIntegration(options);
  registerTelemetryIntegration(registered);
  return registered;
}
