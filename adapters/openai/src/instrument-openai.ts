import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import {
  fromOpenAiChatRequest,
  fromOpenAiChatResponse,
  fromOpenAiResponsesRequest,
  fromOpenAiResponsesResponse,
  getAglTracer,
  llmRequestAttributes,
  llmRequestHeaders,
  llmResponseAttributes,
  type LlmResponse,
} from '@agl/core/tracer';
import { ChatChunkAccumulator, ResponsesEventAccumulator } from './stream-accumulator';

/** Which OpenAI API a wrapped `create` belongs to. */
export type OpenAiApiKind = 'chat' | 'responses';

/** Options of {@link instrumentOpenAI}. */
export interface InstrumentOpenAIOptions {
  /** Tracer to write spans with; default: the AGL tracer (`getAglTracer()`). */
  tracer?: Tracer;
  /** Provider name written as `gen_ai.system` (default `openai`). */
  provider?: string;
  /** Add `traceparent` / `x-rollout-id` / `x-attempt-id` to each request (default true). */
  propagateHeaders?: boolean;
}

type CreateFn = (this: unknown, body: unknown, options?: Record<string, unknown>) => unknown;
const WRAPPED = Symbol.for('agl.openai.wrapped');

function mergeHeaders(ours: Record<string, string>, theirs: unknown): Record<string, unknown> {
  if (!theirs) return ours;
  if (typeof Headers !== 'undefined' && theirs instanceof Headers) return { ...ours, ...Object.fromEntries(theirs.entries()) };
  if (Array.isArray(theirs)) return { ...ours, ...Object.fromEntries(theirs as [string, string][]) };
  return { ...ours, ...(theirs as Record<string, unknown>) };
}

function finish(span: Span, response: LlmResponse): void {
  span.setAttributes(llmResponseAttributes(response));
  span.end();
}

function fail(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}

/** Re-points a streamed result's iterator so every chunk is folded into the span, which ends with the stream. */
function observeStream(stream: { iterator: () => AsyncIterator<unknown> }, kind: OpenAiApiKind, span: Span): void {
  const original = stream.iterator.bind(stream);
  stream.iterator = async function* observed() {
    const acc = kind === 'chat' ? new ChatChunkAccumulator() : new ResponsesEventAccumulator();
    try {
      for await (const chunk of { [Symbol.asyncIterator]: original }) {
        acc.add(chunk);
        yield chunk;
      }
      finish(span, acc.result());
    } catch (err) {
      fail(span, err);
      throw err;
    }
  } as () => AsyncIterator<unknown>;
}

const isStream = (v: unknown): v is { iterator: () => AsyncIterator<unknown> } =>
  typeof v === 'object' && v !== null && typeof (v as { iterator?: unknown }).iterator === 'function';

/**
 * Wraps one `create` method (chat.completions or responses) so each call writes an `openai.chat.completion` span in
 * the Contract 2 layout, streaming included. The returned value is the SDK's own `APIPromise`, untouched.
 */
export function wrapCreate(original: CreateFn, kind: OpenAiApiKind, options: InstrumentOpenAIOptions = {}): CreateFn {
  if ((original as unknown as Record<symbol, unknown>)[WRAPPED]) return original;
  const wrapped: CreateFn = function (this: unknown, body, requestOptions) {
    const tracer = options.tracer ?? getAglTracer().getTracer('@agl/openai');
    const request = kind === 'chat' ? fromOpenAiChatRequest(body, options.provider) : fromOpenAiResponsesRequest(body, options.provider);
    const span = tracer.startSpan(SPAN_CHAT_COMPLETION, { kind: SpanKind.CLIENT, attributes: llmRequestAttributes(request) });
    const ctx = trace.setSpan(context.active(), span);
    const opts =
      options.propagateHeaders === false
        ? requestOptions
        : { ...requestOptions, headers: mergeHeaders(llmRequestHeaders(ctx), requestOptions?.headers) };
    let result: unknown;
    try {
      result = context.with(ctx, () => original.call(this, body, opts));
    } catch (err) {
      fail(span, err);
      throw err;
    }
    if (!result || typeof (result as PromiseLike<unknown>).then !== 'function') {
      span.end();
      return result;
    }
    (result as PromiseLike<unknown>).then(
      (value) => {
        if (isStream(value)) observeStream(value, kind, span);
        else finish(span, kind === 'chat' ? fromOpenAiChatResponse(value) : fromOpenAiResponsesResponse(value));
      },
      (err: unknown) => fail(span, err),
    );
    return result;
  };
  Object.defineProperty(wrapped, WRAPPED, { value: true });
  return wrapped;
}

interface Patchable {
  create: CreateFn;
}

/** Replaces `target.create` with its traced version (idempotent). */
export function patchCreate(target: Patchable | undefined, kind: OpenAiApiKind, options: InstrumentOpenAIOptions = {}): boolean {
  if (!target || typeof target.create !== 'function') return false;
  target.create = wrapCreate(target.create, kind, options);
  return true;
}

/** The parts of an `OpenAI` client instance this module instruments. */
export interface OpenAILikeClient {
  chat?: { completions?: Patchable };
  responses?: Patchable;
}

/**
 * Instruments one `openai` client instance: every `chat.completions.create` and `responses.create` call (streaming
 * too) becomes an `openai.chat.completion` span, with token ids and logprobs when the server returns them.
 *
 * @example
 * const client = instrumentOpenAI(new OpenAI());
 */
export function instrumentOpenAI<T extends object>(client: T, options: InstrumentOpenAIOptions = {}): T {
  const c = client as OpenAILikeClient;
  patchCreate(c.chat?.completions, 'chat', options);
  patchCreate(c.responses, 'responses', options);
  return client;
}

/** The `OpenAI` class shape whose prototypes {@link instrumentOpenAIClass} patches. */
export interface OpenAILikeClass {
  Chat?: { Completions?: { prototype: Patchable } };
  Responses?: { prototype: Patchable };
}

/** Instruments every client of an `OpenAI` class (both APIs), by patching the resource prototypes. */
export function instrumentOpenAIClass(OpenAI: unknown, options: InstrumentOpenAIOptions = {}): boolean {
  const cls = OpenAI as OpenAILikeClass | undefined;
  const a = patchCreate(cls?.Chat?.Completions?.prototype, 'chat', options);
  const b = patchCreate(cls?.Responses?.prototype, 'responses', options);
  return a || b;
}
