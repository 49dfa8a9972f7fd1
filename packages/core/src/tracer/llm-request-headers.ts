import { trace, type Context, context as otelContext } from '@opentelemetry/api';
import { HEADER_ATTEMPT_ID, HEADER_ROLLOUT_ID } from '../semconv';
import { getRolloutContext, isRecordingOff } from './rollout-context';

/**
 * Headers an adapter adds to an outgoing LLM request so the gateway's span joins the adapter's (Contract 2): a W3C
 * `traceparent` for the span active in `ctx`, plus `x-rollout-id` / `x-attempt-id` from the rollout context (or the
 * `AGL_ROLLOUT_ID` / `AGL_ATTEMPT_ID` env vars of a process agent). Empty when there is nothing to propagate, and
 * inside `withoutRecording`.
 */
export function llmRequestHeaders(ctx: Context = otelContext.active()): Record<string, string> {
  const headers: Record<string, string> = {};
  if (isRecordingOff()) return headers;
  const spanContext = trace.getSpanContext(ctx);
  if (spanContext && trace.isSpanContextValid(spanContext)) {
    const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
    headers.traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
  }
  const rollout = getRolloutContext();
  const rolloutId = rollout?.rolloutId ?? process.env.AGL_ROLLOUT_ID;
  const attemptId = rollout?.attemptId ?? process.env.AGL_ATTEMPT_ID;
  if (rolloutId) headers[HEADER_ROLLOUT_ID] = rolloutId;
  if (attemptId) headers[HEADER_ATTEMPT_ID] = attemptId;
  return headers;
}
