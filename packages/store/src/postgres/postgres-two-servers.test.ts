import type { LightningStore } from '@agl/core/store';
import { describeStoreConformance } from '@agl/testing';
import { StoreClient } from '../client/index';
import { createStoreServer } from '../server/index';
import { describe, expect, it } from 'vitest';
import { PG_ENABLED, PG_PROBLEM, conformanceSchema } from './__fixtures__/pg-test-env';

/** A LightningStore that sends each call to the next client in turn: every test hops between servers. */
function roundRobin(clients: StoreClient[]): LightningStore {
  let next = 0;
  return new Proxy(clients[0]!, {
    get(_target, prop) {
      if (prop === 'close') return async () => Promise.all(clients.map((c) => c.close())).then(() => undefined);
      const client = clients[next % clients.length]!;
      const value = Reflect.get(client, prop, client) as unknown;
      if (typeof value !== 'function') return value;
      next += 1;
      return (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(client, args);
    },
  }) as unknown as LightningStore;
}

// The shared suite a fourth way: two store servers, each on its own PostgresStore over one schema, with consecutive
// calls alternating between them (a rollout enqueued on one server is dequeued on the other, a wait on one is woken by
// a finish on the other through NOTIFY). The debounce cases are left out: each server keeps its own watchdog window.
// Always one suite, so that without PostgreSQL the file reports a skipped test (vitest fails a file that defines none:
// "No test suite found"); in CI it fails with the reason when PostgreSQL does not answer.
describe.runIf(PG_ENABLED)('PostgreSQL for the two-server tests', () => {
  it('answers at AGL_TEST_PG_URL', () => expect(PG_PROBLEM).toBeNull());
});

if (PG_ENABLED) {
  const db = conformanceSchema('two');
  describeStoreConformance(
    'StoreClient → two servers → one PostgreSQL schema',
    async (context) => {
      await db.empty();
      const stores = [await db.open(context, 4), await db.open(context, 4)];
      const servers = await Promise.all(
        stores.map((store) => createStoreServer({ store, port: 0, clock: context.clock })),
      );
      const clients = servers.map((s) => new StoreClient({ url: s.url, retryDelays: [], healthRetryDelays: [] }));
      return {
        store: roundRobin(clients),
        cleanup: async () => {
          for (const server of servers) await server.close();
          for (const store of stores) await store.close();
        },
      };
    },
    { parallelDequeuers: 40, configurableDebounce: false, querySpansOfAttempts: false },
  );
}
