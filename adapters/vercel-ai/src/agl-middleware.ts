import type { LanguageModelMiddleware } from 'ai';
import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import {
  fromOpenAiChatResponse,
  fromOpenAiResponsesResponse,
  getAglTracer,
  isRecordingOff,
  llmRequestAttributes,
  llmRequestHeaders,
  llmResponseAttributes,
} from '@agl/core/tracer';
import { fromModelMessages } from './agl-telemetry';
import { isRecord } from '@agl/core/guards';

/**
 * Optional `wrapLanguageModel` middleware (a code change, unlike `registerAglTelemetry()`): writes one
 * `openai.chat.completion` span per non-streaming model call and adds `traceparent` / `x-rollout-id` / `x-attempt-id`
 * headers to the provider request, so the gateway's span joins this one.
 *
 * @example
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: aglMiddleware() });
 */
export function aglMiddleware(options: { tracer?: Tracer } = {}): LanguageModelMiddleware {
  return {
    specificationVersion: 'v3',
    async wrapGenerate({ doGenerate, params, model }) {
      // Inside withoutRecording (a request `observe` leaves unrecorded): the bare call, as without AGL.
      if (!options.tracer && isRecordingOff()) return doGenerate();
      const tracer = options.tracer ?? getAglTracer().getTracer('@agl/vercel-ai');
      const request = {
        provider: model.provider.split('.')[0],
        model: model.modelId,
        messages: fromModelMessages(undefined, params.prompt),
      };
      const span = tracer.startSpan(SPAN_CHAT_COMPLETION, {
        kind: SpanKind.CLIENT,
        attributes: llmRequestAttributes(request),
      });
      const ctx = trace.setSpan(context.active(), span);
      params.headers = { ...llmRequestHeaders(ctx), ...params.headers };
      try {
        const result = await context.with(ctx, doGenerate);
        const body = result.response?.body;
        const response =
          isRecord(body) && Array.isArray(body.choices)
            ? fromOpenAiChatResponse(body)
            : fromOpenAiResponsesResponse(body);
        span.setAttributes(llmResponseAttributes(response));
        return result;
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        throw err;
      } finally {
        span.end();
      }
    },
  };
}
