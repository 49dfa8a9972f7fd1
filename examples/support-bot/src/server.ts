import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { feedback, observedRollout, observeHandler, observeStats, ROLLOUT_ID_HEADER } from '@agl/client';
import { NotFoundError, ValidationError } from '@agl/core/errors';
import { isRecord } from '@agl/core/guards';
import {
  createSupportAgent,
  type SupportAgentOptions,
  type SupportAnswer,
  type SupportResources,
} from './support-agent';

/** Options of {@link createSupportBot}. */
export interface SupportBotOptions extends SupportAgentOptions {
  /** Answers one customer message (default: the LangChain agent of {@link createSupportAgent}). */
  answer?: SupportAnswer;
}

const MAX_BODY_BYTES = 64 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new ValidationError(`the body is over ${MAX_BODY_BYTES} bytes; send a shorter message`);
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ValidationError('the body is not JSON; send {"message": "..."}');
  }
  if (!isRecord(body)) throw new ValidationError('the body must be a JSON object');
  return body;
}

/**
 * The support service: `POST /chat {"message"}` answers `{ reply, rolloutId }` through the agent, each request
 * recorded as a rollout by `observeHandler` (the response also carries `x-agl-rollout-id`); `POST /feedback
 * {"rolloutId", "reward", "comment"?}` attaches a user's rating to that rollout with `feedback()`; `GET /stats` shows
 * the recorder's counters (`observeStats()`). Only `/chat` is recorded.
 */
export function createSupportBot(options: SupportBotOptions = {}): Server {
  const answer = options.answer ?? createSupportAgent(options);

  // Only valid chats are recorded; the body is parsed first and left on `req.body`, where observeHandler's default
  // input (method, path, body) finds it, as it would after Express's `express.json()`.
  const chat = observeHandler(
    async (req: IncomingMessage & { body: { message: string } }, res: ServerResponse) => {
      // The latest published resources (APO's prompt, a fine-tuned model) serve this request; none yet: the defaults.
      const resources = observedRollout(req)?.resources as SupportResources | undefined;
      const reply = await answer(req.body.message, resources);
      const rolloutId = res.getHeader(ROLLOUT_ID_HEADER);
      sendJson(res, 200, { reply, rolloutId: typeof rolloutId === 'string' ? rolloutId : null });
    },
    { agentName: 'support-bot' },
  );

  async function ask(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonObject(req);
    if (typeof body.message !== 'string' || body.message.trim() === '')
      throw new ValidationError(
        'field "message" must be a non-empty string, e.g. {"message": "Where is my order A-1002?"}',
      );
    await chat(Object.assign(req, { body: { message: body.message } }), res);
  }

  async function rate(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJsonObject(req);
    const { rolloutId, reward, comment } = body;
    if (typeof rolloutId !== 'string' || rolloutId === '')
      throw new ValidationError('field "rolloutId" must be the x-agl-rollout-id of a /chat answer');
    if (typeof reward !== 'number' || !Number.isFinite(reward))
      throw new ValidationError(`field "reward" must be a number such as 1 or 0 (got ${JSON.stringify(reward)})`);
    if (comment !== undefined && typeof comment !== 'string')
      throw new ValidationError('field "comment" must be a string when given');
    await feedback(rolloutId, reward, comment === undefined ? {} : { comment });
    sendJson(res, 201, { rolloutId, reward });
  }

  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = `${req.method ?? 'GET'} ${path}`;
    const handled = (async () => {
      if (route === 'POST /chat') return ask(req, res);
      if (route === 'POST /feedback') return rate(req, res);
      if (route === 'GET /stats') return sendJson(res, 200, observeStats());
      if (route === 'GET /healthz') return sendJson(res, 200, { ok: true });
      sendJson(res, 404, { error: `no route ${route}; use POST /chat, POST /feedback or GET /stats` });
    })();
    handled.catch((error: unknown) => {
      // Bad input is the caller's (400), an unknown rollout id too (404); anything else is the LLM's or the store's.
      const status = error instanceof ValidationError ? 400 : error instanceof NotFoundError ? 404 : 502;
      if (status === 502) console.error(`support-bot: ${route} failed:`, error);
      if (res.headersSent) return void res.end();
      sendJson(res, status, { error: `${route}: ${(error as Error).message}` });
    });
  });
}
