import type { IncomingMessage, ServerResponse } from 'node:http';
import { ValidationError } from '@agl/core/errors';
import { MAX_JSON_DEPTH, jsonDepth } from '@agl/core/schema';

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
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        req.off('data', onData);
        req.resume();
        reject(new BodyTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(new ValidationError('The client closed the connection before the request body was complete.', [{ path: '', message: 'aborted' }], { status: 400 }));
    });
  });
}

const empty = (): ValidationError =>
  new ValidationError('Request body is empty; send a JSON object (Content-Type: application/json).', [{ path: '', message: 'empty body' }], {
    status: 400,
  });

/** Parses a request body as a JSON object, or throws a 400 `ValidationError` naming the problem. */
export function parseJsonObject(body: Buffer): JsonRecord {
  if (body.length === 0) throw empty();
  const text = body.toString('utf8');
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new ValidationError(`Request body is nested ${depth} levels deep; the limit is ${MAX_JSON_DEPTH}. Send flatter JSON.`, [{ path: '', message: 'nested too deeply' }], {
      status: 400,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (text.trim() === '') throw empty();
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

/** Sends a JSON body (a string or bytes are sent as-is); `headers` is completed in place. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  headers['content-type'] = 'application/json';
  headers['content-length'] = String(typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength);
  res.writeHead(status, headers);
  res.end(payload);
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
