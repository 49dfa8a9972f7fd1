// Child process of the observe bench: an OTLP/HTTP receiver that accepts every export and discards it (the peer
// variant's collector). It reads each body whole and answers an empty `ExportTraceServiceResponse` (`{}`), as a
// collector does. `GET /stats` answers the exports and bytes received. Prints `OTLP_SINK_URL=...`.
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ exports, bytes }));
    return;
  }
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    exports += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  console.log(`OTLP_SINK_URL=http://127.0.0.1:${address.port}`);
});
process.on('SIGTERM', () => process.exit(0));
