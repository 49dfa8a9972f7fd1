import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord } from '@agl/core/guards';
import type { Dispatcher } from 'undici';
import { callResponseOf } from '../recording/call-records';
import {
  answerThenRecord,
  newSpanId,
  type Recording,
  recordBeforeAnswer,
  SpanPrep,
  type SpanStorage,
} from '../recording/call-span';
import type { PauseController } from '../server/pause-controller';
import { SseParser } from '../streaming/sse-parser';
import { streamHandlerFor } from '../streaming/stream-handlers';
import type { BackendResolver } from '../upstream/backend-resolver';
import {
  type AnthropicMode,
  type CallPlan,
  planCall,
  type TokenIdPolicy,
  type TrainOverrides,
  upstreamHeaders,
  validateBody,
} from '../upstream/call-plan';
import { clientBodyOf } from '../upstream/upstream-body';
import { toUpstreamError, type UpstreamClient } from '../upstream/upstream-client';
import { decodeBody, parseUpstreamJson } from '../upstream/upstream-json';
import { sendCallError, storeFailure } from './call-errors';
import type { GatewayPath } from './gateway-path';
import { type GatewayErrorBody, sendError, sendJson, writeChunk } from './http-io';
import { emptyBody, LLM_BODY_LIMITS, readJsonBody } from './request-body';
import { urlForLog } from '@agl/core/net';

/** Response header with the sequence id of the stored span. */
export const HEADER_SEQUENCE_ID = 'x-agl-sequence-id';
/** Response header with the span id of the stored span. */
export const HEADER_SPAN_ID = 'x-agl-span-id';

/** What every LLM call needs from the gateway (storing its span: {@link SpanStorage}). */
export interface LlmCallContext extends SpanStorage {
  resolver: BackendResolver;
  upstream: UpstreamClient;
  pause: PauseController;
  maxBodyBytes: number;
  tokenIds: TokenIdPolicy;
  anthropic: AnthropicMode;
  trainOverrides: () => TrainOverrides;
  noAnthropic: Set<string>;
}

/**
 * Cancels the backend request when the client goes away. undici takes an `EventEmitter` with `aborted` as a signal,
 * which costs far less per call than an `AbortController`.
 */
class ClientGone extends EventEmitter {
  aborted = false;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** Handles one LLM call end to end: pause check, validation, routing, forwarding, streaming and the span. */
export async function handleLlmCall(
  ctx: LlmCallContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: GatewayPath,
): Promise<void> {
  const startTime = ctx.clock.now();
  if (!ctx.pause.tryEnter()) {
    const { retryAfterSeconds, reason } = ctx.pause.state();
    sendError(res, {
      status: 429,
      errorType: 'gateway_paused',
      detail: `The gateway is paused${reason ? ` (${reason})` : ''}; retry after ${retryAfterSeconds} s.`,
      headers: { 'retry-after': String(retryAfterSeconds), 'x-agl-paused': 'true' },
    });
    return;
  }
  const gone = new ClientGone();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  let prep: SpanPrep | null = null;
  try {
    const client = await readJsonBody(req, { ...LLM_BODY_LIMITS, maxBytes: ctx.maxBodyBytes });
    if (client === null) throw emptyBody();
    validateBody(path.api, client);
    const planOf = (forceTranslate: boolean): Promise<CallPlan> =>
      planCall({
        req,
        path,
        body: client,
        resolver: ctx.resolver,
        tokenIds: ctx.tokenIds,
        anthropic: ctx.anthropic,
        trainOverrides: ctx.trainOverrides(),
        noAnthropic: ctx.noAnthropic,
        forceTranslate,
      });
    let plan = await planOf(false);
    const pending = send(ctx, req, plan, gone);
    prep = SpanPrep.start(ctx.batcher, plan);
    let upstream = await pending;
    if (
      plan.kind === 'anthropic-passthrough' &&
      ctx.anthropic === 'auto' &&
      (upstream.statusCode === 404 || upstream.statusCode === 405)
    ) {
      await upstream.body.dump();
      ctx.noAnthropic.add(plan.target.endpoint.href);
      ctx.log(
        `backend ${plan.target.endpoint.href} does not serve /messages (HTTP ${upstream.statusCode}); translating Anthropic calls to chat/completions from now on`,
      );
      plan = await planOf(true);
      prep?.cancel();
      const retried = send(ctx, req, plan, gone);
      prep = SpanPrep.start(ctx.batcher, plan);
      upstream = await retried;
    }
    const rec: Recording = { plan, prep, spanId: newSpanId(), startTime, req };
    if (upstream.statusCode >= 400) return await passBackendError(ctx, res, plan, upstream);
    const contentType = upstream.headers['content-type'];
    if (plan.stream && typeof contentType === 'string' && contentType.includes('text/event-stream'))
      return await streamCall(ctx, res, rec, upstream, client.model);
    return await jsonCall(ctx, res, rec, upstream, client.model);
  } catch (err) {
    if (gone.aborted) return;
    const sent = sendCallError(res, err);
    if (sent.status >= 500)
      ctx.log(`${req.method ?? ''} ${urlForLog(req.url ?? '')} → ${sent.status} ${sent.errorType}: ${sent.detail}`);
  } finally {
    prep?.cancel();
    ctx.pause.leave();
  }
}

async function send(
  ctx: LlmCallContext,
  req: IncomingMessage,
  plan: CallPlan,
  signal: ClientGone,
): Promise<Dispatcher.ResponseData> {
  return ctx.upstream.send({
    url: plan.url,
    method: 'POST',
    headers: upstreamHeaders(req, plan),
    body: JSON.stringify(plan.prepared.body),
    signal,
  });
}

async function passBackendError(
  ctx: LlmCallContext,
  res: ServerResponse,
  plan: CallPlan,
  upstream: Dispatcher.ResponseData,
): Promise<void> {
  const text = await ctx.upstream.readText(upstream, plan.url);
  let body: string = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) {
      parsed.agl_error_source = 'backend';
      if (plan.kind === 'anthropic-translate' && parsed.type === undefined) parsed.type = 'error';
      body = JSON.stringify(parsed);
    }
  } catch {
    body = JSON.stringify({
      type: 'error',
      agl_error_source: 'backend',
      error: { message: `Backend answered HTTP ${upstream.statusCode}: ${text.slice(0, 2000)}`, type: 'backend_error' },
    });
  }
  const retryAfter = upstream.headers['retry-after'];
  sendJson(res, upstream.statusCode, body, {
    'x-agl-error-source': 'backend',
    ...(typeof retryAfter === 'string' ? { 'retry-after': retryAfter } : {}),
  });
}

/** Logs that a call's span could not be stored and returns the error the client gets for it. */
function spanNotStored(ctx: LlmCallContext, err: unknown): GatewayErrorBody {
  const failure = storeFailure(err);
  ctx.log(`span not stored: ${failure.detail}`);
  return failure;
}

/** Answers the client from the backend's answer and records the call (one per answer kind: JSON, event stream). */
type AnswerHandler = (
  ctx: LlmCallContext,
  res: ServerResponse,
  rec: Recording,
  upstream: Dispatcher.ResponseData,
  clientModel: unknown,
) => Promise<void>;

const jsonCall: AnswerHandler = async (ctx, res, rec, upstream, clientModel) => {
  const plan = rec.plan;
  const bytes = await ctx.upstream.readBytes(upstream, plan.url);
  if (!plan.scope && !plan.prepared.strip && plan.kind !== 'anthropic-translate') {
    sendJson(res, upstream.statusCode, bytes);
    return;
  }
  // The first choice's logprobs list is kept as the backend's text for the span, unless the client gets it back
  // re-serialised (it asked for logprobs but the gateway strips the token ids it did not ask for).
  const logprobsAsText =
    plan.kind === 'chat' && plan.scope !== null && !(plan.prepared.strip && plan.prepared.asked.logprobs);
  let parsed: ReturnType<typeof parseUpstreamJson>;
  try {
    parsed = parseUpstreamJson(bytes, logprobsAsText);
  } catch (err) {
    sendError(res, {
      status: 502,
      errorType: 'upstream_invalid_response',
      detail: `The model backend at ${plan.url.origin} answered HTTP ${upstream.statusCode} with a body that is not a JSON object (${(err as Error).message}): ${decodeBody(bytes.subarray(0, 800)).slice(0, 200)}`,
    });
    return;
  }
  const body = parsed.body;
  const response = callResponseOf(plan.kind, body);
  if (parsed.logprobsContentJson !== null) response.logprobsJson = parsed.logprobsContentJson;
  const clientBody = clientBodyOf(plan, body, clientModel);
  let sequenceId: number | null;
  try {
    sequenceId = await recordBeforeAnswer(ctx, rec, response);
  } catch (err) {
    sendError(res, spanNotStored(ctx, err));
    return;
  }
  const headers: Record<string, string> =
    sequenceId === null ? {} : { [HEADER_SEQUENCE_ID]: String(sequenceId), [HEADER_SPAN_ID]: rec.spanId };
  const answer = (): void => sendJson(res, upstream.statusCode, clientBody ?? bytes, headers);
  if (ctx.spanWrite === 'after-response') await answerThenRecord(ctx, rec, answer, () => response, sequenceId);
  else answer();
};

const streamCall: AnswerHandler = async (ctx, res, rec, upstream, clientModel) => {
  res.writeHead(upstream.statusCode, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...(rec.plan.scope ? { [HEADER_SPAN_ID]: rec.spanId } : {}),
  });
  res.flushHeaders();
  const handler = streamHandlerFor(rec.plan, clientModel);
  const parser = new SseParser();
  const decoder = new TextDecoder();
  try {
    for await (const chunk of upstream.body) {
      for (const event of parser.push(decoder.decode(chunk as Buffer, { stream: true }))) {
        for (const text of handler.onEvent(event)) await writeChunk(res, text);
      }
      if (res.destroyed) return;
    }
    for (const event of parser.push(decoder.decode()))
      for (const text of handler.onEvent(event)) await writeChunk(res, text);
    for (const event of parser.flush()) for (const text of handler.onEvent(event)) await writeChunk(res, text);
  } catch (err) {
    if (res.destroyed) return;
    const mapped = toUpstreamError(err, rec.plan.url, ctx.upstream.timeoutMs);
    ctx.log(
      `stream from ${rec.plan.url.origin} broke off: ${mapped instanceof Error ? mapped.message : String(mapped)}; nothing stored`,
    );
    res.destroy();
    return;
  }
  if (!handler.complete) {
    ctx.log(`stream from ${rec.plan.url.origin} ended without its final event; nothing stored`);
    res.destroy();
    return;
  }
  if (handler.error !== null) {
    ctx.log(`stream from ${rec.plan.url.origin} reported an error (${handler.error}); nothing stored`);
    for (const text of handler.tail()) await writeChunk(res, text);
    res.end();
    return;
  }
  const response = handler.result();
  let sequenceId: number | null;
  try {
    sequenceId = await recordBeforeAnswer(ctx, rec, response);
  } catch (err) {
    const failure = spanNotStored(ctx, err);
    await writeChunk(
      res,
      `event: error\ndata: ${JSON.stringify({ type: 'error', detail: failure.detail, error_type: failure.errorType, error: { type: failure.errorType, message: failure.detail } })}\n\n`,
    );
    res.destroy();
    return;
  }
  for (const text of handler.tail()) await writeChunk(res, text);
  if (ctx.spanWrite === 'after-response')
    await answerThenRecord(
      ctx,
      rec,
      () => res.end(),
      () => response,
      sequenceId,
    );
  else res.end();
};
