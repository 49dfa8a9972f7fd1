import { randomBytes } from 'node:crypto';
import type { LightningStore } from '@agl/core';
import { startGateway } from '@agl/gateway';
import { createStoreServer } from '@agl/store/server';
import type { ProcessEndpoints } from './process-env';

/** Servers the runner started on 127.0.0.1 so child processes have URLs (DESIGN.md Contract 2b). */
export interface LoopbackServer {
  endpoints: ProcessEndpoints;
  close(): Promise<void>;
}

/**
 * Serve `store` on a free loopback port with a fresh bearer token (skipped when `storeEndpoint` is given), and
 * optionally an LLM gateway on the same token, which routes each rollout's calls by its LLM resource and records them
 * as Contract 2 spans with token ids.
 */
export async function startLoopbackServer(options: {
  store: LightningStore;
  storeEndpoint?: ProcessEndpoints;
  gateway: boolean;
}): Promise<LoopbackServer> {
  const token = options.storeEndpoint?.token ?? randomBytes(16).toString('hex');
  const closers: (() => Promise<void>)[] = [];
  try {
    let storeUrl = options.storeEndpoint?.storeUrl;
    if (!storeUrl) {
      const server = await createStoreServer({ store: options.store, host: '127.0.0.1', port: 0, token });
      closers.push(() => server.close());
      storeUrl = server.url;
    }
    let gatewayUrl: string | null = null;
    if (options.gateway) {
      const gateway = await startGateway({ store: options.store, host: '127.0.0.1', port: 0, token });
      closers.push(() => gateway.close());
      gatewayUrl = gateway.url;
    }
    return {
      endpoints: { ...options.storeEndpoint, storeUrl, token, gatewayUrl },
      close: async () => {
        for (const close of closers.reverse()) await close();
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close();
    throw err;
  }
}
