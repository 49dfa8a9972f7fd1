import type { FastifyInstance } from 'fastify';
import { urlForLog } from '@agl/core/net';

/** One structured log line: one JSON object per answered request. */
export interface RequestLogLine {
  time: string;
  level: 'info' | 'warn' | 'error';
  msg: 'request';
  method: string;
  /** Route pattern (`/v1/agl/rollouts/:rollout_id`), `unmatched` for 404s. */
  route: string;
  /** The request URL without its secret query parameters (`token`, `api_key`, `key`, ...: see `urlForLog`). */
  url: string;
  status: number;
  duration_ms: number;
  request_id: string;
  remote: string;
}

/** Where JSON log lines go: `true` = stderr, or a function that receives each line. */
export type RequestLogOption = boolean | ((line: RequestLogLine) => void);

/**
 * Writes one JSON line per answered request (level by status: 5xx error, 4xx warn, else info). The bearer token,
 * request bodies and secret query parameters (a dashboard link's `?token=`, `?api_key=`, `?key=`) are never logged.
 */
export function registerRequestLog(app: FastifyInstance, option: RequestLogOption): void {
  if (option === false) return;
  const sink = option === true ? (line: RequestLogLine) => process.stderr.write(`${JSON.stringify(line)}\n`) : option;
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode;
    sink({
      time: new Date().toISOString(),
      level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
      msg: 'request',
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      url: urlForLog(request.url),
      status,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      request_id: String(request.id),
      remote: request.ip,
    });
  });
}
