import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreConformance } from '@agl/testing';
import { SqliteStore } from '../sqlite/index';
import { createStoreServer } from '../server/index';
import { StoreClient } from '@agl/client';

// The shared suite a third time: StoreClient → real HTTP on 127.0.0.1 → createStoreServer → SqliteStore (temp file).
describeStoreConformance(
  'StoreClient → server → SqliteStore',
  async ({ clock, scanDebounceSeconds }) => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-client-'));
    const backing = new SqliteStore({ path: join(dir, 'store.sqlite'), clock, scanDebounceSeconds });
    const server = await createStoreServer({ store: backing, port: 0, clock });
    const client = new StoreClient({ url: server.url, retryDelays: [], healthRetryDelays: [] });
    return {
      store: client,
      cleanup: async () => {
        await server.close();
        await backing.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { parallelDequeuers: 50, querySpansOfAttempts: false },
);
