import type { IncomingMessage, ServerResponse } from 'node:http';
import { ValidationError } from '@agl/core/errors';

/** A JSON object as parsed from a request or response body. */
export type JsonRecord = Record<string, unknown>;

/** True for a plain (non-array) object. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Thrown by {@link readBody} when the body is larger than the limit (HTTP 413). */
export class BodyTooLargeError extends ValidationError {
  constructor(limitBytes: number) {
    super(`Request body is larger than ${limitBytes} bytes. Send a smaller request or raise the gateway's maxBodyBytes.`, [], {
      status: 400,
    });
  }
}

/** Reads the whole request body, refusing more than `limitBytes`. */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limitBytes) throw new BodyTooLargeError(limitBytes);
    chunks.push(buf);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** Parses a request body as a JSON object, or throws a 400 `ValidationError` naming the problem. */
export function parseJsonObject(body: Buffer): JsonRecord {
  const text = body.toString('utf8');
  if (text.trim() === '') {
    throw new ValidationError('Request body is empty; send a JSON object (Content-Type: application/json).', [{ path: '', message: 'empty body' }], {
      status: 400,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`Request body is not valid JSON (${(err as Error).message}); send a JSON object.`, [{ path: '', message: 'invalid JSON' }], {
      status: 400,
    });
  }
  if (!isRecord(value)) {
    throw new ValidationError(`Request body must be a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}.`, [{ path: '', message: 'not an object' }], {
      status: 400,
    });
  }
  return value;
}

/** Sends a JSON body (a string is sent as-is). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** What {@link sendError} writes. */
export interface GatewayErrorBody {
  /** HTTP status. */
  status: number;
  /** Stable machine-readable kind, e.g. `invalid_request`, `gateway_paused`, `upstream_timeout`. */
  errorType: string;
  /** What failed, the offending value, and the fix. */
  detail: string;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/**
 * Sends an AGL error (`{detail, error_type}`, Contract 5) that OpenAI and Anthropic SDKs can also read: it carries
 * `error.message`/`error.type` and Anthropic's `type: "error"` as well.
 */
export function sendError(res: ServerResponse, error: GatewayErrorBody): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(
    res,
    error.status,
    { type: 'error', detail: error.detail, error_type: error.errorType, error: { message: error.detail, type: error.errorType, code: error.errorType } },
    { 'x-agl-error-source': 'gateway', ...error.headers },
  );
}

/** Writes to a response and waits for `drain` when the socket buffer is full. */
export async function writeChunk(res: ServerResponse, text: string): Promise<void> {
  if (res.destroyed) return;
  if (!res.write(text)) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }
}
