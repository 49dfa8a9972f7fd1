import {
  context,
  SpanStatusCode,
  trace,
  type Attributes as OtelAttributes,
  type Span as OtelSpan,
} from '@opentelemetry/api';
import { toSpanAttributes } from '../transitions/otel-attributes';
import { ATTR_OPERATION_INPUT, ATTR_OPERATION_NAME, ATTR_OPERATION_OUTPUT, SPAN_OPERATION } from '../semconv';
import { getAglTracer } from './agl-tracer';
import { getRolloutContext, isRecordingOff, requireRolloutContext } from './rollout-context';
import { preciseNowMs } from './span-conversion';

/** Options of {@link operation}. */
export interface OperationOptions {
  /** Recorded as `agentlightning.operation.input.*` (flattened). */
  input?: unknown;
  /** Extra span attributes. */
  attributes?: Record<string, unknown>;
  /** Record the return value as `agentlightning.operation.output`. Default true. */
  recordOutput?: boolean;
  /** `false`: run `fn` without a span when outside a rollout (inside one the span is still recorded). Default true. */
  propagate?: boolean;
}

/** Handle passed to the operation body. */
export interface OperationHandle {
  /** Records inputs (`agentlightning.operation.input.*`). */
  setInput(input: unknown): void;
  /** Records the output (`agentlightning.operation.output`); overrides the return value. */
  setOutput(output: unknown): void;
  /** Sets extra attributes. */
  setAttributes(attributes: Record<string, unknown>): void;
  /** The underlying OpenTelemetry span, or `null` when not traced. */
  readonly span: OtelSpan | null;
}

const NOOP_HANDLE: OperationHandle = {
  setInput: () => undefined,
  setOutput: () => undefined,
  setAttributes: () => undefined,
  span: null,
};

function setFlattened(span: OtelSpan, value: unknown, prefix: string): void {
  const isScalar = value === null || typeof value !== 'object';
  span.setAttributes(toSpanAttributes(isScalar ? (value ?? null) : value, prefix) as OtelAttributes);
}

/**
 * Runs `fn` as a traced user step: an `agentlightning.operation` span named by `agentlightning.operation.name`, the
 * active parent of every span started inside it. The return value is recorded as the output; an error marks the span
 * ERROR (with an exception event) and is re-thrown. Outside a rollout this throws a `UserError` unless
 * `{ propagate: false }`, in which case `fn` just runs.
 */
export async function operation<T>(
  name: string,
  fn: (op: OperationHandle) => T | Promise<T>,
  options: OperationOptions = {},
): Promise<T> {
  if ((options.propagate === false && !getRolloutContext()) || isRecordingOff()) return fn(NOOP_HANDLE);
  const ctx = requireRolloutContext(`operation(${JSON.stringify(name)})`);
  const tracer = (ctx.tracer ?? getAglTracer()).getTracer('agentlightning');
  const span = tracer.startSpan(
    SPAN_OPERATION,
    { attributes: { [ATTR_OPERATION_NAME]: name }, startTime: preciseNowMs() },
    context.active(),
  );
  if (options.attributes) span.setAttributes(toSpanAttributes(options.attributes) as OtelAttributes);
  if (options.input !== undefined) setFlattened(span, options.input, ATTR_OPERATION_INPUT);
  let explicitOutput = false;
  const handle: OperationHandle = {
    setInput: (input) => setFlattened(span, input, ATTR_OPERATION_INPUT),
    setOutput: (output) => {
      explicitOutput = true;
      setFlattened(span, output, ATTR_OPERATION_OUTPUT);
    },
    setAttributes: (attributes) => span.setAttributes(toSpanAttributes(attributes) as OtelAttributes),
    span,
  };
  try {
    const result = await context.with(trace.setSpan(context.active(), span), () => fn(handle));
    if (!explicitOutput && (options.recordOutput ?? true) && result !== undefined) {
      setFlattened(span, result, ATTR_OPERATION_OUTPUT);
    }
    span.setStatus({ code: SpanStatusCode.OK });
    return result;
  } catch (error) {
    const err = error instanceof Error ? error : new Error(String(error));
    span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    throw error;
  } finally {
    span.end(preciseNowMs());
  }
}
