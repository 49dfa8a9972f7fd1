// Child process of gateway-bench: the floor for any Node proxy on this machine. A bare pass-through (node:http server,
// undici client kept alive like the gateway's) that buffers the request and the answer and forwards them unchanged:
// no routing, no parsing, no span. The gateway's figures are read against it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { KEEP_ALIVE_THRESHOLD_MS } from '../src/upstream/upstream-client';

const backend = new URL(process.env.BENCH_BACKEND_URL!);
const dispatcher = new Agent({
  connections: 256,
  keepAliveTimeout: 60_000,
  keepAliveTimeoutThreshold: KEEP_ALIVE_THRESHOLD_MS,
});
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const url = new URL(`${backend.pathname}${req.url!.replace(/^\/v1/, '')}`, backend);
    request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    })
      .then(async (upstream) => {
        const answer = Buffer.from(await upstream.body.arrayBuffer());
        res.writeHead(upstream.statusCode, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
      })
      .catch((error: unknown) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: String(error) }));
      });
  });
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
});
process.on('message', (m: { type: string }) => {
  if (m.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage() });
  if (m.type === 'stop') {
    server.closeAllConnections();
    void dispatcher.close().finally(() => process.exit(0));
  }
});
