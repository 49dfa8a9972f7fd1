import { context, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_STREAM_UNREAD, SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import {
  fromOpenAiChatRequest,
  fromOpenAiChatResponse,
  fromOpenAiResponsesRequest,
  fromOpenAiResponsesResponse,
  deferSpanWork,
  getAglTracer,
  getRolloutContext,
  isRecordingOff,
  llmRequestAttributes,
  onProcessEnd,
  recordSpanError,
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

/** The AGL tracer's `@agl/openai` tracer, looked up once per process-wide tracer (not once per call). */
let aglTracer: { owner: ReturnType<typeof getAglTracer>; tracer: Tracer } | null = null;
function defaultTracer(): Tracer {
  const owner = getAglTracer();
  if (aglTracer?.owner !== owner) aglTracer = { owner, tracer: owner.getTracer('@agl/openai') };
  return aglTracer.tracer;
}

function mergeHeaders(ours: Record<string, string>, theirs: unknown): Record<string, unknown> {
  if (!theirs) return ours;
  if (typeof Headers !== 'undefined' && theirs instanceof Headers)
    return { ...ours, ...Object.fromEntries(theirs.entries()) };
  if (Array.isArray(theirs)) return { ...ours, ...Object.fromEntries(theirs as [string, string][]) };
  return { ...ours, ...(theirs as Record<string, unknown>) };
}

/**
 * Ends the span with the response's attributes. With `deferred` (a call `observe` records), the attribute writing and
 * the end run after the app got its answer (`deferSpanWork`), with the end time taken now.
 */
function finish(span: Span, response: LlmResponse, deferred: boolean): void {
  if (!deferred) {
    span.setAttributes(llmResponseAttributes(response));
    span.end();
    return;
  }
  const endTime = performance.now();
  deferSpanWork(() => {
    span.setAttributes(llmResponseAttributes(response));
    span.end(endTime);
  });
}

function fail(span: Span, err: unknown): void {
  recordSpanError(span, err);
  span.end();
}

/** Spans of streams returned to the app and not read yet: ended as unread when the stream is collected. */
const unreadStreams = new FinalizationRegistry<Span>((span) => endUnread(span));
/** The same spans, ended as unread when the process ends (`onProcessEnd`). */
const pendingUnread = new Set<Span>();
onProcessEnd(() => {
  for (const span of pendingUnread) endUnread(span);
});

function endUnread(span: Span): void {
  if (!pendingUnread.delete(span)) return;
  span.setAttribute(ATTR_STREAM_UNREAD, true);
  span.end();
}

/** Gives `fn` the name of the function it stands in for, so `console.log` / `util.inspect` print the same thing. */
function sameName<T extends object>(fn: T, original: { name: string }): T {
  Object.defineProperty(fn, 'name', { value: original.name, configurable: true });
  return fn;
}

/**
 * Re-points a streamed result's `iterator` (an own property of the SDK's `Stream`) so every chunk is folded into the
 * span, which ends with the stream. The stand-in is an async generator function of the same name, so the stream prints
 * as before. A stream nobody reads still ends its span, marked `agentlightning.stream.unread`, when it is garbage
 * collected or the process ends.
 */
function observeStream(
  stream: { iterator: () => AsyncIterator<unknown> },
  kind: OpenAiApiKind,
  span: Span,
  deferred: boolean,
): void {
  const original = stream.iterator;
  const token = {};
  pendingUnread.add(span);
  unreadStreams.register(stream, span, token);
  stream.iterator = sameName(async function* iterator(this: unknown) {
    unreadStreams.unregister(token);
    pendingUnread.delete(span);
    const acc = kind === 'chat' ? new ChatChunkAccumulator() : new ResponsesEventAccumulator();
    try {
      for await (const chunk of { [Symbol.asyncIterator]: () => original.call(this) }) {
        acc.add(chunk);
        yield chunk;
      }
      finish(span, acc.result(), deferred);
    } catch (err) {
      fail(span, err);
      throw err;
    }
  }, original) as () => AsyncIterator<unknown>;
}

const isStream = (v: unknown): v is { iterator: () => AsyncIterator<unknown> } =>
  typeof v === 'object' && v !== null && typeof (v as { iterator?: unknown }).iterator === 'function';

/** The parts of the SDK's `APIPromise` the wrapper hooks into (own fields, set by its constructor). */
interface ApiPromiseFields {
  responsePromise: Promise<unknown>;
  parseResponse: (this: unknown, ...args: unknown[]) => Promise<unknown>;
}

const isApiPromise = (v: unknown): v is ApiPromiseFields =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Partial<ApiPromiseFields>).parseResponse === 'function' &&
  typeof (v as Partial<ApiPromiseFields>).responsePromise?.then === 'function';

/**
 * Ends the span with the call's outcome without adding a reaction of our own to the promise the app awaits: an extra
 * reaction would cut V8's async stack trace, and a crash would print another stack than without AGL. The SDK's
 * `APIPromise` keeps its `responsePromise` and `parseResponse` as own fields; both are replaced in line (same keys, a
 * function of the same kind and name), so the error travels one straight chain and the parsed body passes through
 * our `parseResponse`. Other promise-likes are observed with `then`.
 */
function observeResult(result: PromiseLike<unknown>, kind: OpenAiApiKind, span: Span, deferred: boolean): void {
  let done = false;
  const onValue = (value: unknown): void => {
    if (done) return;
    done = true;
    if (isStream(value)) observeStream(value, kind, span, deferred);
    // The response is read now (the app may change its object once it has it); the rest can wait.
    else finish(span, kind === 'chat' ? fromOpenAiChatResponse(value) : fromOpenAiResponsesResponse(value), deferred);
  };
  const onError = (err: unknown): void => {
    if (done) return;
    done = true;
    fail(span, err);
  };
  if (!isApiPromise(result)) {
    result.then(onValue, onError);
    return;
  }
  const parse = result.parseResponse;
  result.responsePromise = result.responsePromise.then(undefined, (err: unknown) => {
    onError(err);
    throw err;
  });
  result.parseResponse = sameName(async function (this: unknown, ...args: unknown[]) {
    try {
      const value = await parse.apply(this, args);
      onValue(value);
      return value;
    } catch (err) {
      onError(err);
      throw err;
    }
  }, parse);
}

/**
 * Wraps one `create` method (chat.completions or responses) so each call writes an `openai.chat.completion` span in
 * the Contract 2 layout, streaming included. The returned value is the SDK's own `APIPromise`, untouched.
 */
export function wrapCreate(original: CreateFn, kind: OpenAiApiKind, options: InstrumentOpenAIOptions = {}): CreateFn {
  if ((original as unknown as Record<symbol, unknown>)[WRAPPED]) return original;
  const wrapped: CreateFn = function (this: unknown, body, requestOptions) {
    // A request `observe` does not record (sampled out, buffer full): the bare SDK call, no span, no headers.
    if (!options.tracer && isRecordingOff()) return original.call(this, body, requestOptions);
    const tracer = options.tracer ?? defaultTracer();
    const request =
      kind === 'chat'
        ? fromOpenAiChatRequest(body, options.provider)
        : fromOpenAiResponsesRequest(body, options.provider);
    // Attributes set after the start: given to startSpan, the SDK copies and checks the map twice more.
    const span = tracer.startSpan(SPAN_CHAT_COMPLETION, { kind: SpanKind.CLIENT });
    span.setAttributes(llmRequestAttributes(request));
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
    // A call `observe` records (the production recorder's context) ends its span off the app's path.
    observeResult(
      result as PromiseLike<unknown>,
      kind,
      span,
      !options.tracer && getRolloutContext()?.wireSpanSink !== undefined,
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
export function patchCreate(
  target: Patchable | undefined,
  kind: OpenAiApiKind,
  options: InstrumentOpenAIOptions = {},
): boolean {
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
