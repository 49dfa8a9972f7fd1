import type { IncomingMessage, ServerResponse } from 'node:http';

/** Read and JSON-parse a request body (empty body → `{}`). */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.trim() === '' ? {} : (JSON.parse(text) as unknown);
}

/** Send a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A server-sent-events writer with an optional delay between events. */
export class SseWriter {
  #res: ServerResponse;
  #delayMs: number;
  #first = true;

  constructor(res: ServerResponse, delayMs: number) {
    this.#res = res;
    this.#delayMs = delayMs;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  }

  /** Write one event; `event` adds an `event:` line (Responses and Anthropic streams use it). */
  async send(data: unknown, event?: string): Promise<void> {
    if (!this.#first && this.#delayMs > 0) await sleep(this.#delayMs);
    this.#first = false;
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    this.#res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
  }

  end(): void {
    this.#res.end();
  }
}

/** Promise-based delay (used only for scripted latency of the fake model). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
