import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '@agl/store';
import { isPostgresUrl } from '@agl/store/ops';
import { SqliteStore } from '@agl/store/sqlite';

/** What `agl store serve` serves: a PostgreSQL URL, a SQLite file or memory. */
export interface ServeStoreSelection {
  db: string;
  memory?: boolean;
  /** PostgreSQL pool size per server. */
  pgPoolSize?: number;
}

/**
 * Opens the store `agl store serve` serves. A `postgres://` URL opens a `PostgresStore` (the `pg` driver is loaded only
 * then), failing at once with a message naming the URL (no password) when the database is unreachable.
 */
export async function openServeStore(flags: ServeStoreSelection): Promise<{ store: LightningStore; label: string }> {
  if (flags.memory) return { store: new MemoryStore(), label: 'an in-memory store' };
  if (isPostgresUrl(flags.db)) {
    const { PostgresStore } = await import('@agl/store/postgres');
    const store = await PostgresStore.open({
      connectionString: flags.db,
      poolSize: flags.pgPoolSize === undefined ? undefined : Math.max(1, Math.round(flags.pgPoolSize)),
    });
    return { store, label: `${store.url} (schema ${store.schema})` };
  }
  await mkdir(dirname(resolve(flags.db)), { recursive: true });
  return { store: new SqliteStore({ path: flags.db }), label: flags.db };
}
