import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendAnthropicMessage, streamAnthropicMessage } from './anthropic-messages';
import { sendChatCompletion, streamChatCompletion } from './chat-completions';
import { defaultRespond } from './default-respond';
import { readJsonBody, sendJson, SseWriter, sleep } from './http-io';
import { normalizeRequest } from './normalize-request';
import { planReply } from './reply-plan';
import { sendResponse, streamResponse } from './responses-api';
import { sendTextCompletion, streamTextCompletion } from './text-completions';
import type { OpenAiTestServer, OpenAiTestServerOptions, RecordedRequest, TestLlmApi } from './types';

const ROUTES: Record<string, TestLlmApi> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/v1/responses': 'responses',
  '/v1/messages': 'anthropic',
};

const ID_PREFIX: Record<TestLlmApi, string> = {
  chat: 'chatcmpl-',
  completion: 'cmpl-',
  responses: 'resp_',
  anthropic: 'msg_',
};

function authorized(req: IncomingMessage, apiKey: string | undefined): boolean {
  if (apiKey === undefined) return true;
  return req.headers.authorization === `Bearer ${apiKey}` || req.headers['x-api-key'] === apiKey;
}

function errorBody(
  api: TestLlmApi | undefined,
  status: number,
  message: string,
  type: string,
): Record<string, unknown> {
  if (api === 'anthropic') return { type: 'error', error: { type, message } };
  return { error: { message, type, param: null, code: status === 401 ? 'invalid_api_key' : null } };
}

/**
 * Start a fake LLM server on real HTTP that speaks OpenAI Chat Completions, Completions, Responses and Anthropic
 * Messages (plain and streaming), with vLLM-style `prompt_token_ids` / `token_ids` when `return_token_ids: true`.
 * Replies are scripted by `options.respond`.
 *
 * @example
 * const llm = await startOpenAiTestServer({ respond: () => ({ content: '42' }) });
 * const client = new OpenAI({ baseURL: llm.baseURL, apiKey: 'x' });
 * await llm.close();
 */
export async function startOpenAiTestServer(options: OpenAiTestServerOptions = {}): Promise<OpenAiTestServer> {
  const respond = options.respond ?? defaultRespond;
  const requests: RecordedRequest[] = [];
  const keep = (request: RecordedRequest): void => {
    if (options.keepRequests !== false) requests.push(request);
  };
  const models = options.models ?? ['test-model'];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const api = ROUTES[path];
    if (req.method === 'GET' && path === '/v1/models') {
      keep({ method: 'GET', path, headers: req.headers, body: undefined });
      if (!authorized(req, options.apiKey))
        return sendJson(res, 401, errorBody(undefined, 401, 'Incorrect API key provided.', 'invalid_request_error'));
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'agl-testing' })),
      });
    }
    if (req.method !== 'POST' || api === undefined) {
      return sendJson(
        res,
        404,
        errorBody(
          undefined,
          404,
          `No route ${req.method ?? ''} ${path}; the test server serves /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages and GET /v1/models.`,
          'not_found_error',
        ),
      );
    }
    let body: unknown;
    try {
      body = await readJsonBody(req);
    } catch (err) {
      return sendJson(
        res,
        400,
        errorBody(api, 400, `Request body is not valid JSON: ${String(err)}`, 'invalid_request_error'),
      );
    }
    keep({ method: 'POST', path, headers: req.headers, body });
    if (!authorized(req, options.apiKey))
      return sendJson(res, 401, errorBody(api, 401, 'Incorrect API key provided.', 'authentication_error'));
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return sendJson(res, 400, errorBody(api, 400, 'Request body must be a JSON object.', 'invalid_request_error'));
    }
    const request = normalizeRequest(api, body as Record<string, unknown>, req.headers, path);
    const reply = await respond(request);
    const latency = (options.latencyMs ?? 0) + (reply.latencyMs ?? 0);
    if (latency > 0) await sleep(latency);
    if (reply.error)
      return sendJson(
        res,
        reply.error.status,
        errorBody(api, reply.error.status, reply.error.message, reply.error.type ?? 'api_error'),
      );
    const plan = planReply(request, reply, ID_PREFIX[api]);
    const streamOptions = (body as Record<string, unknown>).stream_options;
    const includeUsage =
      typeof streamOptions === 'object' &&
      streamOptions !== null &&
      (streamOptions as Record<string, unknown>).include_usage === true;
    if (!request.stream) {
      if (api === 'chat') return sendChatCompletion(res, plan);
      if (api === 'completion') return sendTextCompletion(res, plan);
      if (api === 'responses') return sendResponse(res, plan);
      return sendAnthropicMessage(res, plan);
    }
    const sse = new SseWriter(res, options.chunkDelayMs ?? 0);
    if (api === 'chat') return streamChatCompletion(sse, plan, includeUsage);
    if (api === 'completion') return streamTextCompletion(sse, plan, includeUsage);
    if (api === 'responses') return streamResponse(sse, plan);
    return streamAnthropicMessage(sse, plan);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, errorBody(undefined, 500, `Test server respond() failed: ${String(err)}`, 'api_error'));
      else res.end();
    });
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
