/**
 * `npm start` (from examples/support-bot): the support service on `PORT` (default 3000; 0 picks a free port), recorded
 * into the AGL store at `AGL_STORE_URL` (the `@agl/langchain/register` preload traces the agent). Prints
 * `SUPPORT_BOT_URL=...` once it listens; SIGINT / SIGTERM stop it after flushing the recordings.
 */
import type { AddressInfo } from 'node:net';
import { flushObserve } from '@agl/client';
import { createSupportBot } from './server';

const server = createSupportBot();
const port = Number(process.env.PORT ?? 3000);
server.listen(port, process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address() as AddressInfo;
  console.log(`SUPPORT_BOT_URL=http://${address.address}:${address.port}`);
  if (!process.env.AGL_STORE_URL)
    console.log('AGL_STORE_URL is not set: requests are answered but not recorded (start `npx agl store serve`).');
});

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeIdleConnections();
  void flushObserve(5000).finally(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
