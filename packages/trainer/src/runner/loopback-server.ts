import { randomBytes } from 'node:crypto';
import type { LightningStore } from '@agl/core';
import { createStoreServer } from '@agl/store/server';
import type { ProcessEndpoints } from './process-env';

/** A store server the runner started on 127.0.0.1 so child processes have URLs (DESIGN.md Contract 2b). */
export interface LoopbackServer {
  endpoints: ProcessEndpoints;
  close(): Promise<void>;
}

/** Serve `store` on a free loopback port with a fresh bearer token. */
export async function startLoopbackServer(store: LightningStore, token: string = randomBytes(16).toString('hex')): Promise<LoopbackServer> {
  const server = await createStoreServer({ store, host: '127.0.0.1', port: 0, token });
  return { endpoints: { storeUrl: server.url, token }, close: () => server.close() };
}
