import { SpanStatusCode, type Span } from '@opentelemetry/api';

/**
 * Marks `span` as failed with `error`: ERROR status with the message, and an `exception` event with the type and
 * message. The stack is left out on purpose: reading `error.stack` before Node prints an uncaught error changes the
 * source line Node prints above it, and instrumentation must not change what a crashing app prints.
 */
export function recordSpanError(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const name = error instanceof Error ? error.name : typeof error;
  span.recordException({ name, message });
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
