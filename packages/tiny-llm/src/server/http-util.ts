import type { IncomingMessage, ServerResponse } from 'node:http';
import { AglError, NotFoundError, UserError, ValidationError } from '@agl/core/errors';

/** Reads a JSON body (at most `limit` bytes). */
export async function readJson(req: IncomingMessage, limit = 8 * 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit)
      throw new ValidationError(`body: larger than ${limit} bytes; send a smaller request.`, [], { status: 400 });
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ValidationError('body: is not valid JSON; send a JSON object with Content-Type: application/json.', [], {
      status: 400,
    });
  }
}

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

/** Maps an error to `{detail, error_type}` (plus OpenAI's `error` object, which OpenAI clients read) and a status. */
export function sendError(res: ServerResponse, err: unknown): void {
  let status = 500;
  if (ValidationError.isInstance(err)) status = err.status;
  else if (NotFoundError.isInstance(err)) status = 404;
  else if (UserError.isInstance(err)) status = 400;
  const detail = err instanceof Error ? err.message : String(err);
  const errorType = AglError.isInstance(err) ? err.name : 'AGL_InternalError';
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, status, { detail, error_type: errorType, error: { message: detail, type: errorType, code: status } });
}
