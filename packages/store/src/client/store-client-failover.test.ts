import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer, type StoreServer } from '../server/index';
import { StoreClient } from '@agl/client';

// Several servers of one store (PostgreSQL in production; here two servers over one in-process MemoryStore).
describe('StoreClient with several server URLs', () => {
  const servers: StoreServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('fails over to the next URL when a server is gone, for retried calls and for a dequeue that never left', async () => {
    const store = new MemoryStore();
    const a = await createStoreServer({ store, port: 0 });
    const b = await createStoreServer({ store, port: 0 });
    servers.push(b);
    const client = new StoreClient({ url: `${a.url},${b.url}`, retryDelays: [0.01], healthRetryDelays: [0.01] });
    expect(client.url).toBe(a.url);
    const [r1, r2] = await client.enqueueRollouts([{ input: 1 }, { input: 2 }]);
    await a.close();
    // dequeue is never retried, but a refused connection means it never reached a server: the next URL gets it
    const claimed = await client.dequeueRollout({ workerId: 'w' });
    expect(claimed?.rolloutId).toBe(r1!.rolloutId);
    expect(client.url).toBe(b.url);
    await client.updateAttempt(claimed!.rolloutId, claimed!.attempt.attemptId, { status: 'succeeded' });
    expect((await store.getRolloutById(r1!.rolloutId))?.status).toBe('succeeded');
    expect((await client.getRolloutById(r2!.rolloutId))?.status).toBe('queuing');
    await client.close();
  });

  it('a fallbackUrls list works the same, and with every server down the error names the last URL tried', async () => {
    const store = new MemoryStore();
    const a = await createStoreServer({ store, port: 0 });
    const b = await createStoreServer({ store, port: 0 });
    const client = new StoreClient({ url: a.url, fallbackUrls: [b.url], retryDelays: [], healthRetryDelays: [] });
    await a.close();
    expect((await client.enqueueRollout({ input: 1 })).status).toBe('queuing');
    await b.close();
    await expect(client.queryRollouts()).rejects.toThrow(/Could not reach the AGL store/);
    await client.close();
  });
});
