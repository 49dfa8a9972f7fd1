import type OpenAI from 'openai';
import { traceOpenAiChat } from '@agl/core/tracer';

/**
 * A chat call through the plain `openai` client, recorded as a Contract 2 `openai.chat.completion` span (what the
 * openai adapter does; kept here so the runner tests do not depend on an adapter package).
 */
export async function instrumentedChat(
  client: OpenAI,
  body: OpenAI.ChatCompletionCreateParamsNonStreaming & { return_token_ids?: boolean },
): Promise<OpenAI.ChatCompletion> {
  return traceOpenAiChat(body, () => client.chat.completions.create(body), { tracerName: 'test-agent' });
}
