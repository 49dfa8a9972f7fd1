import type OpenAI from 'openai';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  fromOpenAiChatRequest,
  fromOpenAiChatResponse,
  getAglTracer,
  llmRequestAttributes,
  llmResponseAttributes,
} from '@agl/core/tracer';

/**
 * A chat call through the plain `openai` client, recorded as a Contract 2 `openai.chat.completion` span (what the
 * openai adapter does; kept here so the runner tests do not depend on an adapter package).
 */
export async function instrumentedChat(
  client: OpenAI,
  body: OpenAI.ChatCompletionCreateParamsNonStreaming & { return_token_ids?: boolean },
): Promise<OpenAI.ChatCompletion> {
  const tracer = getAglTracer().getTracer('test-agent');
  return tracer.startActiveSpan('openai.chat.completion', async (span) => {
    try {
      span.setAttributes(llmRequestAttributes(fromOpenAiChatRequest(body, 'openai')));
      const response = await client.chat.completions.create(body);
      span.setAttributes(llmResponseAttributes(fromOpenAiChatResponse(response)));
      return response;
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
