import type { ServerResponse } from 'node:http';

/** Sends a JSON body (a string or bytes are sent as-is); `headers` is completed in place. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
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
    {
      type: 'error',
      detail: error.detail,
      error_type: error.errorType,
      error: { message: error.detail, type: error.errorType, code: error.errorType },
    },
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
