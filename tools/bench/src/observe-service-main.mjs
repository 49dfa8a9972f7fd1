// Child process of the observe bench: the support-bot's shape of service, a node:http `POST /chat`. Its agent makes one
// chat completion through the `openai` client (the smallest shape), or with `BENCH_AGENT=langchain` it is the
// support-bot's own: a LangChain.js `createAgent` that looks the order up with a tool (two LLM calls and a tool call per
// request). Plain JavaScript run by plain `node` on the built packages, as a service runs in production (no TypeScript
// loader in the process). With `BENCH_RECORDED=1` (the parent also adds `--import @agl/openai/register`, or
// `@agl/langchain/register`, and `AGL_STORE_URL`) the handler is wrapped by `observeHandler`, as a user would; with the
// preload alone (no store) AGL traces each LLM call and records nothing; with neither, nothing of AGL is loaded. Prints
// `SERVICE_URL=...`; `GET /stats` answers `observeStats()` (or `{}`); `GET /flush` exports what the recorder holds (or,
// under the OpenTelemetry preload `observe-otel-preload.mjs`, what its span processor holds) and answers once it is
// sent; `GET /heap` answers the V8 heap in use after a full collection (the parent starts it with `--expose-gc`).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:http';
import OpenAI from 'openai';

const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: 'sk-bench', maxRetries: 0 });
const client = process.env.BENCH_RECORDED === '1' ? await import('@agl/client') : null;

/** One chat completion through the `openai` client. @type {(message: string) => Promise<string>} */
const askOpenAi = async (message) => {
  const completion = await openai.chat.completions.create({
    model: 'support-model',
    messages: [
      { role: 'system', content: 'You are the support desk of a web shop. Answer in one short sentence.' },
      { role: 'user', content: message },
    ],
  });
  return completion.choices[0]?.message.content ?? '';
};
const ask = process.env.BENCH_AGENT === 'langchain' ? await langChainAgent() : askOpenAi;

/** The support-bot's agent: LangChain.js `createAgent` with an `order_status` tool. */
async function langChainAgent() {
  const [{ ChatOpenAI }, { createAgent, tool }, { z }] = await Promise.all([
    import('@langchain/openai'),
    import('langchain'),
    import('zod'),
  ]);
  const orderStatus = tool(({ orderId }) => `Order ${orderId} is shipped, arriving 2026-12-07.`, {
    name: 'order_status',
    description: "Look up an order's status and arrival date by its id, such as A-1002.",
    schema: z.object({ orderId: z.string().describe('the order id, e.g. A-1002') }),
  });
  const model = new ChatOpenAI({
    model: 'support-model',
    apiKey: 'sk-bench',
    temperature: 0,
    maxRetries: 0,
    configuration: { baseURL: process.env.OPENAI_BASE_URL },
  });
  const agent = createAgent({
    model,
    tools: [orderStatus],
    systemPrompt:
      'You are the support desk of a web shop. Look up any order with order_status, answer in one sentence.',
    name: 'support-bot',
  });
  /** @type {(message: string) => Promise<string>} */
  return async (message) => {
    const out = await agent.invoke({ messages: [{ role: 'user', content: message }] }, { recursionLimit: 6 });
    const content = out.messages.at(-1)?.content;
    return typeof content === 'string' ? content : JSON.stringify(content ?? '');
  };
}

/** @type {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => Promise<void>} */
const chat = async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const { message } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const text = JSON.stringify({ reply: await ask(message) });
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
  if (req.url === '/flush') {
    // Exports what the recorder (or the OpenTelemetry preload's span processor) still holds, then answers.
    const flushed = client ? client.flushObserve(30_000) : (globalThis.__benchFlush?.() ?? Promise.resolve());
    void Promise.resolve(flushed).then(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    return;
  }
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
