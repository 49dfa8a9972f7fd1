import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AglError, UserError, ValidationError } from '@agl/core/errors';
import { isRecord, type JsonRecord } from '@agl/core/guards';
import {
  ChatTemplateError,
  type ChatTokenizer,
  type SamplingClient,
  type ServiceClient,
  TinkerApiError,
  TinkerRequestFailedError,
  tokenizerForModel,
} from '@agl/tinker';
import {
  completionHead,
  tinkerChatRequest,
  tinkerCompletionBody,
  tinkerCompletionEvents,
  type TinkerSampled,
} from './tinker-chat-completion';

/** Options of {@link startTinkerUpstream}. */
export interface TinkerUpstreamOptions {
  /** The Tinker service (its API key goes only to its base URL); the caller closes it. */
  service: ServiceClient;
  /** Base model to sample from when a call names no model, and the tokenizer family of `sampler` paths. */
  baseModel?: string | null;
  /** A `tinker://…/sampler_weights/…` path to sample from when a call names no model (wins over `baseModel`). */
  sampler?: string | null;
  /**
   * Tokenizer directory, `tokenizer.json` or npm package (`--tokenizer`); default: the built-in one of the family, else
   * the one the Tinker server serves itself (the embedded policy's), else the hub's.
   */
  tokenizer?: string | null;
  /**
   * Read the tokenizer of a model outside the built-in families (and without `tokenizer`) from the Hugging Face hub
   * (default true; it is never reached for Qwen3 or Llama 3.x, or with `tokenizer`).
   */
  hub?: boolean;
  /** `max_tokens` of a call that gives none (default 4096). */
  maxTokens?: number;
  /** When set, every request needs `Authorization: Bearer <token>` (the gateway sets one, so only it can sample). */
  token?: string | null;
  /** Operational messages. */
  log?: (line: string) => void;
}

/** A running Tinker upstream: an OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 that samples through Tinker. */
export interface TinkerUpstream {
  /** `http://127.0.0.1:<port>/v1`, the gateway's backend. */
  readonly baseUrl: string;
  /** The model of calls that name none: `sampler`, else `baseModel`, else null. */
  readonly defaultModel: string | null;
  /** The Tinker service's base URL (LLM resources naming its origin are routed here). */
  readonly tinkerBaseUrl: string;
  close(): Promise<void>;
}

interface ModelRoute {
  sampler: SamplingClient;
  tokenizer: ChatTokenizer;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<JsonRecord> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new ValidationError(`The request body is over ${MAX_BODY_BYTES} bytes.`, [], { status: 400 }));
        req.destroy();
      } else parts.push(chunk);
    });
    req.on('end', () => {
      try {
        const value: unknown = JSON.parse(Buffer.concat(parts).toString('utf8'));
        if (!isRecord(value)) throw new Error('not a JSON object');
        resolve(value);
      } catch (err) {
        reject(
          new ValidationError(`The request body is not a JSON object: ${(err as Error).message}.`, [], { status: 400 }),
        );
      }
    });
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** An error as an OpenAI error body; caller mistakes and the service's 4xx keep a 4xx status. */
function errorAnswer(err: unknown): { status: number; body: JsonRecord } {
  const message = err instanceof Error ? err.message : String(err);
  const answer = (status: number, type: string): { status: number; body: JsonRecord } => ({
    status,
    body: { error: { message, type, code: type } },
  });
  if (ValidationError.isInstance(err)) return answer(400, 'invalid_request');
  if (ChatTemplateError.isInstance(err)) return answer(400, 'chat_template_error');
  if (TinkerApiError.isInstance(err))
    return answer(err.status >= 400 && err.status < 500 ? err.status : 502, 'tinker_error');
  if (TinkerRequestFailedError.isInstance(err)) return answer(err.category === 'user' ? 400 : 502, 'tinker_error');
  if (UserError.isInstance(err)) return answer(400, 'invalid_request');
  if (AglError.isInstance(err)) return answer(502, 'tinker_error');
  return answer(500, 'internal_error');
}

/**
 * Starts an OpenAI-compatible chat-completions server on 127.0.0.1 that answers by sampling through Tinker: it renders
 * the messages with the base model's chat template, calls `asample` with the prompt's token ids (stopping on the
 * template's end-of-turn tokens), decodes the sampled ids and parses tool calls back. Answers carry vLLM's token-id
 * fields (`prompt_token_ids`, choice `token_ids`, `logprobs.content`) when asked, so the gateway in front records the
 * ids `asample` returned. A call's `model` is a `tinker://…/sampler_weights/…` path or a base model name.
 */
export async function startTinkerUpstream(options: TinkerUpstreamOptions): Promise<TinkerUpstream> {
  const log = options.log ?? (() => undefined);
  const maxTokens = options.maxTokens ?? 4096;
  const defaultModel = options.sampler ?? options.baseModel ?? null;
  const routes = new Map<string, Promise<ModelRoute>>();

  async function tokenizerFor(model: string): Promise<ChatTokenizer> {
    const common = {
      tokenizer: options.tokenizer ?? null,
      hub: options.hub !== false,
      // A server that serves its own tokenizer (the embedded policy) is asked before the hub.
      serverTokenizer: (ref: { model: string; tokenizerId: string | null }) =>
        options.service.serverTokenizerFiles(ref),
    };
    if (options.tokenizer) return tokenizerForModel(model, common);
    if (!model.startsWith('tinker://')) return tokenizerForModel(model, common);
    if (options.baseModel) return tokenizerForModel(options.baseModel, common);
    let base: string;
    try {
      base = (await options.service.weightsInfo(model)).base_model;
    } catch (err) {
      throw new ChatTemplateError(
        `Cannot tell the base model of ${model} (weights_info: ${(err as Error).message}); start the gateway with --base-model or --tokenizer.`,
        { cause: err },
      );
    }
    return tokenizerForModel(base, common);
  }

  function routeOf(model: string): Promise<ModelRoute> {
    let route = routes.get(model);
    if (route === undefined) {
      route = (async () => {
        const tokenizer = await tokenizerFor(model);
        const sampler = await options.service.createSamplingClient(
          model.startsWith('tinker://') ? { modelPath: model } : { baseModel: model },
        );
        log(`tinker: sampling session ${sampler.samplingSessionId} for ${model} (tokenizer ${tokenizer.source})`);
        return { sampler, tokenizer };
      })();
      route.catch(() => routes.delete(model));
      routes.set(model, route);
    }
    return route;
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const model = typeof body.model === 'string' && body.model !== '' ? body.model : defaultModel;
    if (model === null) {
      throw new ValidationError(
        'The call names no model and the gateway has no default: send "model" (a base model or tinker://…/sampler_weights/… path), or start it with --base-model or --sampler.',
        [{ path: 'model', message: 'required' }],
        { status: 400 },
      );
    }
    const { sampler, tokenizer } = await routeOf(model);
    const request = tinkerChatRequest(body, tokenizer, { maxTokens });
    const prompt = tokenizer.renderPrompt(request.messages, {
      tools: request.tools,
      templateKwargs: request.templateKwargs,
    });
    const response = await sampler.sample(prompt.ids, request.sample);
    const sampled: TinkerSampled = { model, promptIds: prompt.ids, response, tokenizer, request };
    const head = completionHead(model);
    if (!request.stream) {
      sendJson(res, 200, tinkerCompletionBody(sampled, head));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const event of tinkerCompletionEvents(sampled, head)) res.write(event);
    res.end();
  }

  const token = options.token ? Buffer.from(`Bearer ${options.token}`) : null;
  const authorized = (req: IncomingMessage): boolean => {
    if (token === null) return true;
    const given = Buffer.from(req.headers.authorization ?? '');
    return given.length === token.length && timingSafeEqual(given, token);
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = (req.url ?? '/').split('?')[0];
    if (!authorized(req)) {
      return sendJson(res, 401, {
        error: {
          message: 'The Tinker upstream takes calls from its gateway only.',
          type: 'unauthorized',
          code: 'unauthorized',
        },
      });
    }
    if (req.method === 'POST' && pathname === '/v1/chat/completions') return chat(req, res);
    if (req.method === 'GET' && pathname === '/v1/models') {
      const models = defaultModel === null ? [] : [defaultModel];
      return sendJson(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'tinker' })),
      });
    }
    sendJson(res, 404, {
      error: {
        message: `The Tinker upstream serves POST /v1/chat/completions and GET /v1/models, not ${req.method ?? ''} ${pathname}.`,
        type: 'not_found',
        code: 'not_found',
      },
    });
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const { status, body } = errorAnswer(err);
      if (status >= 500)
        log(
          `tinker: ${req.method ?? ''} ${req.url ?? ''} → ${status}: ${String(body.error && (body.error as JsonRecord).message)}`,
        );
      if (res.headersSent) res.destroy();
      else sendJson(res, status, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  if (defaultModel !== null)
    void routeOf(defaultModel).catch((err: unknown) => log(`tinker: ${(err as Error).message}`));
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    defaultModel,
    tinkerBaseUrl: options.service.http.baseUrl,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
