import { getAglTracer } from './agl-tracer';
import { llmRequestAttributes, llmResponseAttributes } from './llm-span';
import { fromOpenAiChatRequest, fromOpenAiChatResponse } from './openai-payload';
import { getRolloutContext, isRecordingOff } from './rollout-context';
import { recordSpanError } from './span-error';

/** Options of {@link traceOpenAiChat}. */
export interface TraceOpenAiChatOptions {
  /** OpenTelemetry tracer name (default `agl`). */
  tracerName?: string;
  /** `gen_ai.system` of the call (default `openai`). */
  provider?: string;
}

/**
 * Runs one OpenAI Chat Completions call, `send`, inside an `openai.chat.completion` span that holds the Contract 2
 * attributes of the request `body` and of the response `send` resolves with; a throw marks the span failed and is
 * rethrown. The span goes to the current rollout's tracer (else the process-wide one), as the emitters' do. For agents that call an OpenAI-compatible endpoint without an instrumented client (the adapters trace the
 * `openai` client and the frameworks themselves).
 */
export async function traceOpenAiChat<R>(
  body: unknown,
  send: () => Promise<R>,
  options: TraceOpenAiChatOptions = {},
): Promise<R> {
  if (isRecordingOff()) return send();
  const tracer = (getRolloutContext()?.tracer ?? getAglTracer()).getTracer(options.tracerName ?? 'agl');
  return tracer.startActiveSpan('openai.chat.completion', async (span) => {
    try {
      span.setAttributes(llmRequestAttributes(fromOpenAiChatRequest(body, options.provider ?? 'openai')));
      const response = await send();
      span.setAttributes(llmResponseAttributes(fromOpenAiChatResponse(response)));
      return response;
    } catch (error) {
      recordSpanError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}
