import type { IncomingMessage, ServerResponse } from 'node:http';
import { type PauseController, pauseStateToWire } from '../server/pause-controller';
import { sendError, sendJson } from './http-io';
import { CONTROL_BODY_LIMITS, readJsonBody } from './request-body';

/** `POST /proxy/pause`, `POST /proxy/resume`, `GET /proxy/state` (AGL 1.0 routes 13 to 15). */
export async function handlePauseRoute(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  pause: PauseController,
): Promise<void> {
  if (pathname === '/proxy/state' && req.method === 'GET') return sendJson(res, 200, pauseStateToWire(pause.state()));
  if (pathname === '/proxy/resume' && req.method === 'POST')
    return sendJson(res, 200, pauseStateToWire(pause.resume()));
  if (pathname === '/proxy/pause' && req.method === 'POST') {
    const body = (await readJsonBody(req, CONTROL_BODY_LIMITS)) ?? {};
    const retry = body.retry_after_seconds;
    if (retry !== undefined && (typeof retry !== 'number' || !Number.isFinite(retry) || retry < 0)) {
      return sendError(res, {
        status: 400,
        errorType: 'invalid_request',
        detail: `"retry_after_seconds" must be a number ≥ 0, got ${JSON.stringify(retry)}.`,
      });
    }
    const reason = body.reason;
    if (reason !== undefined && reason !== null && typeof reason !== 'string') {
      return sendError(res, {
        status: 400,
        errorType: 'invalid_request',
        detail: `"reason" must be a string, got ${JSON.stringify(reason)}.`,
      });
    }
    const options: { retryAfterSeconds?: number; reason?: string | null } = {
      reason: typeof reason === 'string' ? reason : null,
    };
    if (typeof retry === 'number') options.retryAfterSeconds = Math.ceil(retry);
    return sendJson(res, 200, pauseStateToWire(pause.pause(options)));
  }
  return sendError(res, {
    status: 404,
    errorType: 'not_found',
    detail: `No route ${req.method ?? ''} ${pathname}; the control routes are POST /proxy/pause, POST /proxy/resume and GET /proxy/state.`,
  });
}
