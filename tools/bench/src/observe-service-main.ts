/**
 * Child process of the observe bench: the support-bot's shape of service at its smallest, a node:http `POST /chat`
 * whose agent makes one chat completion through the `openai` client. With `BENCH_RECORDED=1` (the parent also adds
 * `--import @agl/openai/register` and `AGL_STORE_URL`) the handler is wrapped by `observeHandler`, as a user would;
 * without it, nothing of AGL is loaded. Prints `SERVICE_URL=...`; `GET /stats` answers `observeStats()` (or `{}`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'sk-bench', maxRetries: 0 });
const recorded = process.env.BENCH_RECORDED === '1';
const client = recorded ? await import('@agl/client') : null;

const chat: Handler = async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const { message } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message: string };
  const completion = await openai.chat.completions.create({
    model: 'support-model',
    messages: [
      { role: 'system', content: 'You are the support desk of a web shop. Answer in one short sentence.' },
      { role: 'user', content: message },
    ],
  });
  const text = JSON.stringify({ reply: completion.choices[0]?.message.content ?? '' });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};
const handler: Handler = client ? client.observeHandler(chat, { agentName: 'bench-support' }) : chat;

const server = createServer((req, res) => {
  if (req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(client ? client.observeStats() : {}));
    return;
  }
  handler(req, res).catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  console.log(`SERVICE_URL=http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => process.exit(0));
