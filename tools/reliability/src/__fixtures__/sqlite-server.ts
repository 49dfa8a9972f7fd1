/**
 * A store server in its own process, for crash and auth tests: SqliteStore on `AGL_DB` behind createStoreServer on
 * 127.0.0.1, port 0. Prints `AGL_STORE_URL=…` once it listens (like `agl store serve`).
 */
import { createStoreServer } from '@agl/store/server';
import { SqliteStore } from '@agl/store/sqlite';

const path = process.env.AGL_DB;
if (!path) throw new Error('AGL_DB is not set: pass the SQLite file of the store.');
const store = new SqliteStore({ path, scanDebounceSeconds: 0 });
const server = await createStoreServer({ store, port: 0, token: process.env.AGL_STORE_TOKEN || null, closeStore: true });
process.stdout.write(`AGL_STORE_URL=${server.url}\n`);
const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
