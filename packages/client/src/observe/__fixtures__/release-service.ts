import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { observedRollout, observeHandler } from '../../index';

/** What the service answered: the rollout, the arm and the prompt that served it. */
export interface ServiceAnswer {
  status: number;
  rolloutId: string | null;
  arm: string | null;
  resourcesId: string | null;
  prompt: string;
}

/** The prompt a request is served with when nothing is published (the app's defaults). */
export const DEFAULT_PROMPT = 'DEFAULT PROMPT';

/**
 * A support-bot-like service behind `observeHandler`: it reads its system prompt from `observedRollout(req).resources`
 * (`main` prompt template, else the default), asks a test LLM (OpenAI chat completions wire), records the call as an
 * LLM span with the prompt it sent, and answers JSON. The `x-user` header is the unit key; `failRate(prompt)` makes
 * that share of the prompt's requests answer 500 (a worse candidate).
 */
export async function startReleaseService(
  options: { failRate?: (prompt: string) => number; random?: () => number } = {},
): Promise<{
  url: string;
  llm: OpenAiTestServer;
  ask: (user: string) => Promise<ServiceAnswer>;
  close: () => Promise<void>;
}> {
  const random = options.random ?? Math.random;
  const llm = await startOpenAiTestServer({
    keepRequests: false,
    respond: (request) => ({ content: `answered with: ${request.messages[0]?.content ?? ''}` }),
  });
  const app: Server = createServer(
    observeHandler(
      async (req, res) => {
        const rollout = observedRollout(req);
        const main = rollout?.resources?.main;
        const prompt = main?.resourceType === 'prompt_template' ? main.template : DEFAULT_PROMPT;
        const body = {
          model: 'test-model',
          messages: [
            { role: 'system', content: prompt },
            { role: 'user', content: 'where is my order?' },
          ],
        };
        const answer = (await (
          await fetch(`${llm.baseURL}/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()) as {
          choices: Array<{ message: { content: string } }>;
          usage: { prompt_tokens: number; completion_tokens: number };
        };
        getAglTracer()
          .getTracer('release-service')
          .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
            span.setAttribute('gen_ai.prompt.0.role', 'system');
            span.setAttribute('gen_ai.prompt.0.content', prompt);
            span.setAttribute('gen_ai.completion.0.content', answer.choices[0]!.message.content);
            span.setAttribute('gen_ai.usage.input_tokens', answer.usage.prompt_tokens);
            span.setAttribute('gen_ai.usage.output_tokens', answer.usage.completion_tokens);
            span.end();
          });
        const failed = random() < (options.failRate?.(prompt) ?? 0);
        res.statusCode = failed ? 500 : 200;
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            arm: rollout?.release?.arm ?? null,
            resourcesId: rollout?.resourcesId ?? null,
            prompt,
          }),
        );
      },
      { unitKey: (req) => req.headers['x-user'] as string | undefined },
    ),
  );
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  return {
    url,
    llm,
    ask: async (user) => {
      const response = await fetch(`${url}/chat`, { headers: { 'x-user': user } });
      const json = (await response.json()) as Omit<ServiceAnswer, 'status' | 'rolloutId'>;
      return { ...json, status: response.status, rolloutId: response.headers.get('x-agl-rollout-id') };
    },
    close: async () => {
      app.closeAllConnections();
      await new Promise((resolve) => app.close(resolve));
      await llm.close();
    },
  };
}
