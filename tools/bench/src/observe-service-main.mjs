// Child process of the observe bench: the support-bot's shape of service at its smallest, a node:http `POST /chat`
// whose agent makes one chat completion through the `openai` client. Plain JavaScript run by plain `node` on the built
// packages, as a service runs in production (no TypeScript loader in the process). With `BENCH_RECORDED=1` (the parent
// also adds `--import @agl/openai/register` and `AGL_STORE_URL`) the handler is wrapped by `observeHandler`, as a user
// would; with the preload alone (no store) AGL traces each LLM call and records nothing; with neither, nothing of AGL
// is loaded. Prints `SERVICE_URL=...`; `GET /stats` answers `observeStats()` (or
// `{}`); `GET /heap` answers the V8 heap in use after a full collection (the parent starts it with `--expose-gc`).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:http';
import OpenAI from 'openai';

const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'sk-bench', maxRetries: 0 });
const client = process.env.BENCH_RECORDED === '1' ? await import('@agl/client') : null;

/** @type {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => Promise<void>} */
const chat = async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const { message } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
// BENCH_ASYNC_CONTEXT=1: nothing of AGL, each request inside an AsyncLocalStorage (what Node 20's async hooks cost).
const asyncContext = process.env.BENCH_ASYNC_CONTEXT === '1' ? new AsyncLocalStorage() : null;
const handler = client
  ? client.observeHandler(chat, { agentName: 'bench-support' })
  : asyncContext
    ? (req, res) => asyncContext.run({ req }, () => chat(req, res))
    : chat;

const server = createServer((req, res) => {
  if (req.url === '/stats' || req.url === '/heap') {
    if (req.url === '/heap') globalThis.gc?.();
    const body = req.url === '/heap' ? { heapUsed: process.memoryUsage().heapUsed } : (client?.observeStats() ?? {});
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    return;
  }
  handler(req, res).catch((error) => {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(`SERVICE_URL=http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => process.exit(0));
